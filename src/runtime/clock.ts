/**
 * Epoch milliseconds, the scheduler's once-a-second tick, and deadlines. Every time the service
 * reads, and every run it schedules by the wall clock, comes from here, so tests can move it.
 */
export interface Clock {
  now(): number;
  /** Runs `run` at the start of every second until stopped; a second whose run finds the last one still going is skipped. */
  everySecond(run: () => void | Promise<void>): { stop(): void };
  /** Runs `run` once, `ms` from now, unless cancelled first (a deadline, such as a request body's). */
  after(ms: number, run: () => void): { cancel(): void };
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
  after(ms, run) {
    const timer = setTimeout(run, ms);
    return { cancel: () => clearTimeout(timer) };
  },
};

/**
 * A clock that stands still until told to move. Its seconds never start on their own, so a
 * scheduled run happens only when the test makes it (`second()`, or the dispatcher's `tick()`),
 * never in the middle of what a test measures.
 */
export class ManualClock implements Clock {
  private readonly runs = new Set<() => void | Promise<void>>();
  private readonly deadlines = new Set<{ at: number; run: () => void }>();
  constructor(private current: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  everySecond(run: () => void | Promise<void>): { stop(): void } {
    this.runs.add(run);
    return { stop: () => this.runs.delete(run) };
  }
  /** Runs `run` once the clock has been moved `ms` on (advance, set). */
  after(ms: number, run: () => void): { cancel(): void } {
    const deadline = { at: this.current + ms, run };
    this.deadlines.add(deadline);
    return { cancel: () => this.deadlines.delete(deadline) };
  }
  /** How many `after` runs are waiting: a test moves the clock once the deadline it means to pass is set. */
  get waiting(): number {
    return this.deadlines.size;
  }
  /** Starts a second: runs what everySecond scheduled, as the system clock does at each, and waits for it. */
  async second(): Promise<void> {
    await Promise.all([...this.runs].map(async (run) => run()));
  }
  advance(ms: number): void {
    this.set(this.current + ms);
  }
  set(ms: number): void {
    this.current = ms;
    const due = [...this.deadlines].filter((d) => d.at <= ms).sort((a, b) => a.at - b.at);
    for (const deadline of due) {
      this.deadlines.delete(deadline);
      deadline.run();
    }
  }
}
