import type { Config } from "./config/config.ts";
import type { Limits } from "./limits/limiter.ts";
import type { Logger } from "./observability/logger.ts";
import type { Metrics } from "./observability/metrics.ts";
import type { Tracing } from "./observability/tracing.ts";
import type { Store } from "./store/store.ts";
import type { Clock } from "./runtime/clock.ts";
import type { Fetch } from "./runtime/fetch.ts";
import type { Random } from "./runtime/random.ts";
import type { Resolver } from "./runtime/resolver.ts";

/** Everything createApp needs from the outside world; tests pass their own. */
export interface Deps {
  config: Config;
  store: Store;
  /** The proxy's rate limiter: in memory on one instance, shared (Redis) across many. */
  limits: Limits;
  clock: Clock;
  random: Random;
  resolver: Resolver;
  fetch: Fetch;
  logger: Logger;
  metrics: Metrics;
  /** OpenTelemetry traces; absent when OTEL_EXPORTER_OTLP_ENDPOINT is not set, and then no span is made. */
  tracing?: Tracing;
  /**
   * How to run this program, for a backup's own process (src/backup/child.ts): resolved by main.ts,
   * as the compiled binary runs itself; from source it defaults to `bun src/main.ts`.
   */
  backupCommand?: readonly string[];
}
