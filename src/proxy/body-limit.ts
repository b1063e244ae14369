/** SPEC 7.2 / 8.2: the largest proxied request body. Read as 100 MiB, so any "100 MB" file fits. */
export const MAX_BODY_BYTES = 100 * 1024 * 1024;

/** The declared Content-Length, or null for a body without one (chunked) or no body. */
export function declaredLength(request: Request): number | null {
  const value = request.headers.get("content-length");
  return value === null ? null : Number(value);
}

/**
 * Passes a body through unchanged while counting it; past `max` bytes it fails the stream and
 * calls `onTooLarge` (which aborts the upstream request), so nothing beyond the limit is sent.
 */
export function countedBody(body: ReadableStream<Uint8Array>, max: number, onTooLarge: () => void): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > max) {
          onTooLarge();
          controller.error(new Error("request body exceeds the limit"));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
}
