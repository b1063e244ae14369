export type Outcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

/** One input of a committed batch, with its outcome and its caller's promise. */
export interface Done<I, O> {
  input: I;
  outcome: Outcome<O>;
  /** Resolves or rejects the caller's promise with `outcome`. */
  settle(): void;
  /** Rejects the caller's promise with `error` instead. */
  reject(error: unknown): void;
}

export interface GroupCommitRules<I, O> {
  /** Commits the inputs in ONE transaction, answering each in order (throws when it rolled back). */
  commit(inputs: I[]): O[] | Promise<O[]>;
  /**
   * Whether a batch that failed with `error` is committed again one input at a time, so that only
   * the input at fault is rejected; when not, every input is rejected with it. Always by default.
   */
  retryAlone?(error: unknown): boolean;
  /** When each caller learns its outcome; at once by default. */
  settle?(batch: Done<I, O>[]): void;
}

/**
 * Group commit, for both backends' queues: the calls that arrive in the same turn of the event loop
 * (and while the previous batch commits) share ONE transaction. A commit costs far more than the
 * statements in it (a WAL write and sync, a round trip), so at thousands of events a second this
 * is what keeps up. Each backend keeps its own rule for when a caller is answered (`settle`).
 */
export class GroupCommit<I, O> {
  private waiting: { input: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;

  constructor(private readonly rules: GroupCommitRules<I, O>) {}

  run(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushing = this.flush().finally(() => {
        this.flushing = null;
        if (this.waiting.length > 0) this.schedule();
      });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting.splice(0);
    const outcomes = await this.outcomes(batch.map((w) => w.input));
    const done = batch.map(({ input, resolve, reject }, i): Done<I, O> => {
      const outcome = outcomes[i] as Outcome<O>;
      return { input, outcome, reject, settle: () => (outcome.ok ? resolve(outcome.value) : reject(outcome.error)) };
    });
    if (this.rules.settle) this.rules.settle(done);
    else for (const d of done) d.settle();
  }

  private async outcomes(inputs: I[]): Promise<Outcome<O>[]> {
    try {
      return (await this.rules.commit(inputs)).map((value) => ({ ok: true, value }));
    } catch (error) {
      // A batch of one has already been committed alone.
      if (inputs.length === 1 || !(this.rules.retryAlone?.(error) ?? true))
        return inputs.map(() => ({ ok: false, error }));
      const outcomes: Outcome<O>[] = [];
      for (const input of inputs) {
        try {
          outcomes.push({ ok: true, value: (await this.rules.commit([input]))[0] as O });
        } catch (alone) {
          outcomes.push({ ok: false, error: alone });
        }
      }
      return outcomes;
    }
  }
}
