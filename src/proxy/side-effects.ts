import { effectOfFault, upstreamFault, type Effect, type UpstreamFault } from "../numbers/state-change.ts";
import type { Target } from "./checks.ts";

/**
 * docs/proxy.md#upstream-errors-that-change-a-state, docs/proxy.md#limits: only upstream JSON error bodies up to this
 * size are examined.
 */
export const INSPECT_LIMIT = 64 * 1024;

/** The state change an upstream error body calls for, or null (not JSON, no such code, wrong kind of call). */
export function effectOf(body: Uint8Array, target: Target): Effect | null {
  let fault: UpstreamFault | null;
  try {
    fault = upstreamFault(JSON.parse(new TextDecoder().decode(body)));
  } catch {
    return null;
  }
  return (
    fault &&
    effectOfFault(fault, {
      idKind: target.route.id,
      wabaId: target.waba.wabaId,
      phoneNumberId: target.number?.phoneNumberId ?? null,
    })
  );
}

/**
 * Passes an upstream error body to the caller chunk by chunk, untouched and without waiting, while
 * keeping a copy of its first 64 KB; once it has ended, a body that fit is handed to `inspect`.
 * (Buffering the body first would hold the caller's answer back by a round of reads; teeing would
 * tie the caller's pace to the copy's. A pass-through copy costs neither.)
 */
export function inspectedBody(
  body: ReadableStream<Uint8Array>,
  inspect: (bytes: Uint8Array) => void,
): ReadableStream<Uint8Array> {
  const kept: Uint8Array[] = [];
  let length = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        length += chunk.byteLength;
        if (length <= INSPECT_LIMIT) kept.push(chunk.slice());
        controller.enqueue(chunk);
      },
      flush() {
        if (length <= INSPECT_LIMIT) inspect(Buffer.concat(kept));
      },
    }),
  );
}
