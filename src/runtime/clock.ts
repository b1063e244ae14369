import { Cron } from "croner";

/**
 * Epoch milliseconds, and the scheduler's once-a-second tick. Every time the service reads, and
 * every run it schedules by the wall clock, comes from here, so tests can move it.
 */
export interface Clock {
  now(): number;
  /** Runs `run` at the start of every second until stopped; a second whose run finds the last one still going is skipped. */
  everySecond(run: () => void | Promise<void>): { stop(): void };
}

export const systemClock: Clock = {
  now: () => Date.now(),
  everySecond(run) {
    // `unref`: the tick never keeps the process alive; `catch`: a failing run is the runner's to log.
    const cron = new Cron("* * * * * *", { protect: true, catch: true, unref: true }, run);
    return { stop: () => cron.stop() };
  },
};

/**
 * A clock that stands still until told to move. Its seconds never start on their own, so a
 * scheduled run happens only when the test makes it (the dispatcher's `tick()`), never in the
 * middle of what a test measures.
 */
export class ManualClock implements Clock {
  constructor(private current: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  everySecond(): { stop(): void } {
    return { stop() {} };
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}
