/** SPEC 7.2 / 8.2: the largest proxied request body. Read as 100 MiB, so any "100 MB" file fits. */
export const MAX_BODY_BYTES = 100 * 1024 * 1024;

/**
 * Passes a body through unchanged while counting it; past `max` bytes it fails the stream and
 * calls `onTooLarge` (which aborts the upstream request), so nothing beyond the limit is sent.
 * Pull-based: a chunk is read from the caller only when upstream asks for one, so at most one
 * chunk is in flight and a slow upstream slows the caller instead of filling memory.
 */
export function countedBody(body: ReadableStream<Uint8Array>, max: number, onTooLarge: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
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
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}
