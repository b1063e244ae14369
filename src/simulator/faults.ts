import type { UpstreamErrorCode } from "./upstream-errors.ts";

/** What the simulator can be told to do instead of (or before) answering normally. */
export type Fault =
  | { error: UpstreamErrorCode; message?: string }
  | { delayMs: number }
  /**
   * Answers exactly these bytes (after the credential check), with the platform's headers unless
   * overridden; `chunked` sends them in two chunks without a Content-Length.
   */
  | {
      reply: {
        status: number;
        body: string | Uint8Array<ArrayBuffer>;
        headers?: Record<string, string>;
        chunked?: boolean;
      };
    }
  /** Closes the connection without sending a status line. */
  | { drop: true };

interface Armed {
  fault: Fault;
  /** How many more requests it applies to; undefined = until cleared. */
  remaining: number | undefined;
}

/**
 * Faults keyed by the id a request targets (the id in its path, or its `phone_number_id`
 * parameter), or by "*" for every request.
 */
export class FaultTable {
  private readonly armed = new Map<string, Armed[]>();

  set(id: string, fault: Fault, times?: number): void {
    const list = this.armed.get(id) ?? [];
    list.push({ fault, remaining: times });
    this.armed.set(id, list);
  }

  clear(id?: string): void {
    if (id === undefined) this.armed.clear();
    else this.armed.delete(id);
  }

  /** The faults that apply to a request about these ids, counting each use. */
  take(ids: (string | null)[]): Fault[] {
    const out: Fault[] = [];
    for (const id of [...ids, "*"]) {
      if (id === null) continue;
      const list = this.armed.get(id);
      if (!list) continue;
      for (const armed of list) {
        out.push(armed.fault);
        if (armed.remaining !== undefined) armed.remaining--;
      }
      const left = list.filter((a) => a.remaining === undefined || a.remaining > 0);
      if (left.length === 0) this.armed.delete(id);
      else this.armed.set(id, left);
    }
    return out;
  }
}
