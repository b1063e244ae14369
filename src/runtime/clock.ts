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
    // A timer to the next whole second of epoch time, set again at each. (croner did this and
    // more; its first use of local time loaded the time zone data, 5-25 ms of every start.)
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    let stopped = false;
    const next = () => {
      // `unref`: the tick never keeps the process alive.
      timer = setTimeout(tick, 1000 - (Date.now() % 1000));
      timer.unref();
    };
    const tick = () => {
      if (stopped) return;
      next();
      if (running) return;
      running = true;
      // A failing run is the runner's to log.
      void (async () => run())()
        .catch(() => {})
        .finally(() => (running = false));
    };
    next();
    return {
      stop() {
        stopped = true;
        clearTimeout(timer);
      },
    };
  },
};

/**
 * A clock that stands still until told to move. Its seconds never start on their own, so a
 * scheduled run happens only when the test makes it (`second()`, or the dispatcher's `tick()`),
 * never in the middle of what a test measures.
 */
export class ManualClock implements Clock {
  private readonly runs = new Set<() => void | Promise<void>>();
  constructor(private current: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  everySecond(run: () => void | Promise<void>): { stop(): void } {
    this.runs.add(run);
    return { stop: () => this.runs.delete(run) };
  }
  /** Starts a second: runs what everySecond scheduled, as the system clock does at each, and waits for it. */
  async second(): Promise<void> {
    await Promise.all([...this.runs].map(async (run) => run()));
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}
