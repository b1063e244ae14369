/**
 * docs/errors.md#proxy-errors, docs/proxy.md#limits: the largest proxied request body. Read as 100 MiB, so any "100 MB"
 * file fits.
 */
export const MAX_BODY_BYTES = 100 * 1024 * 1024;

/**
 * How much counted body may pass between two collections. Every chunk Bun hands to JavaScript is a
 * fresh buffer that is garbage once upstream has taken it, and Bun's collector lets tens of MB of
 * them pile up during a fast upload (a 100 MB chunked upload added 30-56 MB of RSS); neither an
 * eden collection nor a pull-based or direct stream changed that. A full collection every 16 MiB
 * keeps it at 18-24 MB; it pauses the process 7-12 ms each time (about six pauses per 100 MB),
 * paid only by chunked bodies past 16 MiB (bench/RESULTS.md, Proxy).
 */
const COLLECT_EVERY_BYTES = 16 * 1024 * 1024;

/**
 * Passes a body through unchanged while counting it; past `max` bytes it fails the stream and
 * calls `onTooLarge` (which aborts the upstream request), so nothing beyond the limit is sent.
 * Pull-based: a chunk is read from the caller only when upstream asks for one, so at most one
 * chunk is in flight and a slow upstream slows the caller instead of filling memory.
 */
export function countedBody(
  body: ReadableStream<Uint8Array>,
  max: number,
  onTooLarge: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  let collectAt = COLLECT_EVERY_BYTES;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += value.byteLength;
        if (seen > max) {
          onTooLarge();
          controller.error(new Error("request body exceeds the limit"));
          await reader.cancel();
          return;
        }
        controller.enqueue(value);
        if (seen >= collectAt) {
          collectAt = seen + COLLECT_EVERY_BYTES;
          Bun.gc(true);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}
