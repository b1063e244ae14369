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
 * Passes an upstream error body to the caller chunk by chunk, untouched and as the caller reads it,
 * while keeping a copy of its first 64 KB; `ended` is called once, when the body has ended (with
 * the copy, if the whole body fit), failed or been cancelled by the caller (null).
 * (Buffering the body first would hold the caller's answer back by a round of reads; teeing would
 * tie the caller's pace to the copy's. A pass-through copy costs neither.)
 */
export function inspectedBody(
  body: ReadableStream<Uint8Array>,
  ended: (bytes: Uint8Array | null) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const kept: Uint8Array[] = [];
  let length = 0;
  let open = true;
  const end = (bytes: Uint8Array | null) => {
    if (!open) return;
    open = false;
    ended(bytes);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          end(null);
          return controller.error(error);
        }
        if (chunk.done) {
          controller.close();
          return end(length <= INSPECT_LIMIT ? Buffer.concat(kept) : null);
        }
        length += chunk.value.byteLength;
        if (length <= INSPECT_LIMIT) kept.push(chunk.value.slice());
        else kept.length = 0;
        controller.enqueue(chunk.value);
      },
      cancel(reason) {
        end(null);
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
