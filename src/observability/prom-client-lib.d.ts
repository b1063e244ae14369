// prom-client's own modules, imported one by one (metrics.ts): its index also loads the cluster
// aggregator and the push gateway's HTTP, HTTPS and zlib clients, which a start-up pays for.
declare module "prom-client/lib/registry" {
  import type { Registry } from "prom-client";
  const RegistryClass: typeof Registry;
  export default RegistryClass;
}
declare module "prom-client/lib/counter" {
  import type { Counter } from "prom-client";
  const CounterClass: typeof Counter;
  export default CounterClass;
}
declare module "prom-client/lib/gauge" {
  import type { Gauge } from "prom-client";
  const GaugeClass: typeof Gauge;
  export default GaugeClass;
}
declare module "prom-client/lib/histogram" {
  import type { Histogram } from "prom-client";
  const HistogramClass: typeof Histogram;
  export default HistogramClass;
}
/** One of the default metrics: registers itself (and its collector) in `registry`. */
declare module "prom-client/lib/metrics/*" {
  import type { Registry } from "prom-client";
  const install: (registry: Registry, config: { prefix: string; eventLoopMonitoringPrecision: number }) => void;
  export default install;
}
