import { isUnavailable } from "./unavailable.ts";

type Waiting<I, O> = { input: I; resolve: (value: O) => void; reject: (error: unknown) => void };

/**
 * Group commit, as SQLite's queue does it: the calls that arrive in the same turn of the event
 * loop (and while the previous batch commits) share ONE transaction, run by `commit`, which
 * answers each input in order; each promise resolves once that commit is done. A batch that fails
 * for a reason other than the database being unreachable is run again one input at a time, so
 * only the input at fault is rejected.
 */
export class TurnBatch<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;

  constructor(private readonly commit: (inputs: I[]) => Promise<O[]>) {}

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
    try {
      const outputs = await this.commit(batch.map((w) => w.input));
      batch.forEach((w, i) => w.resolve(outputs[i]!));
    } catch (error) {
      if (batch.length === 1 || isUnavailable(error)) {
        for (const w of batch) w.reject(error);
        return;
      }
      for (const w of batch) {
        try {
          w.resolve((await this.commit([w.input]))[0]!);
        } catch (alone) {
          w.reject(alone);
        }
      }
    }
  }
}
