-- One SPEC 8.1 decision on one token bucket, atomically, by the Redis server's clock (the same
-- arithmetic as src/limits/token-bucket.ts). KEYS[1]: the bucket. ARGV: capacity, refill window
-- (ms), key expiry (ms). The bucket is a hash {tokens, at}: `tokens` as of `at`. An unknown bucket
-- is full; a refused request changes nothing. A bucket's time never goes back: after a failover to
-- a server whose clock is behind, its tokens are not refilled twice for the same moments.
-- Returns {allowed, remaining, reset seconds, retry-after seconds or -1}.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local capacity = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local tokens = capacity
local at = now
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
if state[1] then
  local since = tonumber(state[2])
  tokens = math.min(capacity, tonumber(state[1]) + (math.max(0, now - since) * capacity) / window)
  at = math.max(now, since)
end
local function seconds_to_gain(n)
  return math.ceil((n * window) / capacity / 1000)
end
if tokens >= 1 then
  local left = tokens - 1
  redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', left), 'at', string.format('%.17g', at))
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return { 1, math.floor(left), seconds_to_gain(capacity - left), -1 }
end
return { 0, 0, seconds_to_gain(capacity - tokens), math.max(1, seconds_to_gain(1 - tokens)) }
