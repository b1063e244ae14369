-- Rate-limit decisions (docs/proxy.md#rate-limits) on token buckets, atomically, by the Redis server's clock (the same
-- arithmetic as src/limits/token-bucket.ts), for every decision one instance gathered in one turn
-- of its event loop. KEYS: the buckets, in the order decided (a key may come more than once: each
-- decision sees the one before). ARGV: for each key, its capacity and refill window (ms); a key
-- expires after twice its window. A bucket is a hash {tokens, at}: `tokens` as of `at`. An unknown
-- bucket is full; a refused request changes nothing. A bucket's time never goes back: after a
-- failover to a server whose clock is behind, its tokens are not refilled twice for the same moments.
-- Returns, for each key in turn, {allowed, remaining, reset seconds, retry-after seconds or -1}.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local function seconds_to_gain(n, capacity, window)
  return math.ceil((n * window) / capacity / 1000)
end
local out = {}
for i, key in ipairs(KEYS) do
  local capacity = tonumber(ARGV[2 * i - 1])
  local window = tonumber(ARGV[2 * i])
  local tokens = capacity
  local at = now
  local state = redis.call('HMGET', key, 'tokens', 'at')
  if state[1] then
    local since = tonumber(state[2])
    tokens = math.min(capacity, tonumber(state[1]) + (math.max(0, now - since) * capacity) / window)
    at = math.max(now, since)
  end
  local n = #out
  if tokens >= 1 then
    local left = tokens - 1
    redis.call('HSET', key, 'tokens', string.format('%.17g', left), 'at', string.format('%.17g', at))
    redis.call('PEXPIRE', key, 2 * window)
    out[n + 1] = 1
    out[n + 2] = math.floor(left)
    out[n + 3] = seconds_to_gain(capacity - left, capacity, window)
    out[n + 4] = -1
  else
    out[n + 1] = 0
    out[n + 2] = 0
    out[n + 3] = seconds_to_gain(capacity - tokens, capacity, window)
    out[n + 4] = math.max(1, seconds_to_gain(1 - tokens, capacity, window))
  end
end
return out
