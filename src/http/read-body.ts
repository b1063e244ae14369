import type { Clock } from "../runtime/clock.ts";

/** A body read whole, or why not. */
export type Read = Uint8Array<ArrayBuffer> | "too_large" | "late";

/**
 * Reads a body whole, counting it against `max`, unless `ms` pass on `clock` first (the body
 * deadline, REQUEST_BODY_TIMEOUT_MS, however steadily its bytes trickle in). Throws when the
 * sender breaks off. The rest of a body refused is never read: the answer closes the connection
 * (ERRORS' `closes`).
 */
export async function readWithin(
  body: ReadableStream<Uint8Array>,
  max: number,
  ms: number,
  clock: Clock,
): Promise<Read> {
  const reader = body.getReader();
  let deadline: { cancel(): void } | undefined;
  const late = new Promise<"late">((resolve) => (deadline = clock.after(ms, () => resolve("late"))));
  const stop = (why: "too_large" | "late") => {
    void reader.cancel().catch(() => {});
    return why;
  };
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late]);
      if (next === "late") return stop("late");
      if (next.done) break;
      size += next.value.byteLength;
      if (size > max) return stop("too_large");
      chunks.push(next.value);
    }
  } finally {
    deadline?.cancel();
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}

/**
 * A request's body whole by Bun's own read (a fifth of the cost of reading its stream here: the
 * proxy's small bodies, bench/RESULTS.md), unless `ms` pass on `clock` first. Throws when the
 * sender breaks off; for a body that may exceed its limit, see readWithin.
 */
export function bytesWithin(request: Request, ms: number, clock: Clock): Promise<Uint8Array | "late"> {
  const bytes = request.bytes();
  // One promise settled by whichever comes first, not Promise.race's: half the garbage a call. Once
  // late, the read ends with the connection; nobody is left to hear how.
  return new Promise((resolve, reject) => {
    const deadline = clock.after(ms, () => resolve("late"));
    bytes.then(
      (read) => {
        deadline.cancel();
        resolve(read);
      },
      (error: unknown) => {
        deadline.cancel();
        reject(error);
      },
    );
  });
}
