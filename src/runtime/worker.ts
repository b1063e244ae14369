/** Background work a capability runs while the server is up (scheduler ticks, coalesced writes). */
export interface Worker {
  start(): void;
  /** Finishes in-flight work and flushes state; called after the server stops accepting. */
  stop(): Promise<void>;
}
