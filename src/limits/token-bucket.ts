/**
 * Continuous-refill token buckets (docs/proxy.md#rate-limits) as plain arithmetic: `capacity` tokens, refilled at
 * `capacity` per `windowMs`, so an idle bucket is full and can burst to its capacity.
 */
export interface BucketSpec {
  key: string;
  capacity: number;
  windowMs: number;
}

export interface Tokens {
  tokens: number;
  /** Clock time (ms) at which `tokens` was exact. */
  updatedAt: number;
}

/** What the rate-limit step answers, with the values of the RateLimit-* headers. */
export interface Decision {
  allowed: boolean;
  limit: number;
  /** Whole requests left after this one. */
  remaining: number;
  /** Seconds, rounded up, until the bucket is full again. */
  resetSeconds: number;
  /** Only when refused: seconds, rounded up, until one request is available. */
  retryAfterSeconds: number | null;
}

/** The tokens a bucket holds at `now`; an unknown bucket is full. */
export function level(state: Tokens | undefined, spec: BucketSpec, now: number): number {
  if (!state) return spec.capacity;
  const elapsed = Math.max(0, now - state.updatedAt);
  return Math.min(spec.capacity, state.tokens + (elapsed * spec.capacity) / spec.windowMs);
}

const secondsToGain = (tokens: number, spec: BucketSpec) => Math.ceil((tokens * spec.windowMs) / spec.capacity / 1000);

/** Takes one token if there is one. Returns the bucket's next state and the decision. */
export function take(state: Tokens | undefined, spec: BucketSpec, now: number): { next: Tokens; decision: Decision } {
  const tokens = level(state, spec, now);
  if (tokens >= 1) {
    const left = tokens - 1;
    return {
      next: { tokens: left, updatedAt: now },
      decision: {
        allowed: true,
        limit: spec.capacity,
        remaining: Math.floor(left),
        resetSeconds: secondsToGain(spec.capacity - left, spec),
        retryAfterSeconds: null,
      },
    };
  }
  return {
    next: { tokens, updatedAt: now },
    decision: {
      allowed: false,
      limit: spec.capacity,
      remaining: 0,
      resetSeconds: secondsToGain(spec.capacity - tokens, spec),
      retryAfterSeconds: Math.max(1, secondsToGain(1 - tokens, spec)),
    },
  };
}

/**
 * What the limiter answers when it fails or is too slow (docs/proxy.md#when-the-limiter-fails): let the request
 * through.
 */
export function failOpenDecision(spec: BucketSpec): Decision {
  return { allowed: true, limit: spec.capacity, remaining: spec.capacity, resetSeconds: 0, retryAfterSeconds: null };
}
