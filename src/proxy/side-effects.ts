import type { Logger } from "../observability/logger.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Directory } from "../store/store.ts";
import type { NumberStatus } from "../store/types.ts";
import type { Target } from "./checks.ts";

/** SPEC 7.5 / 8.2: only upstream JSON error bodies up to this size are examined. */
export const INSPECT_LIMIT = 64 * 1024;

/** SPEC 3.3: upstream codes that change a number's state when the call was made at a number id. */
const NUMBER_CODES: Record<number, NumberStatus> = { 131031: "restricted", 133010: "not_registered", 368: "flagged" };

export type Effect = { waba: string } | { number: string; status: NumberStatus };

/** The state change an upstream error body calls for, or null (not JSON, no such code, wrong kind of call). */
export function effectOf(body: Uint8Array, target: Target): Effect | null {
  let code: unknown;
  try {
    code = (JSON.parse(new TextDecoder().decode(body)) as { error?: { code?: unknown } } | null)?.error?.code;
  } catch {
    return null;
  }
  // SPEC 3.3: 190 counts for calls made at a number or WABA id (not at a media id); the other
  // codes only for calls at a number id.
  if (code === 190) return target.route.id === "media" ? null : { waba: target.waba.wabaId };
  const status = typeof code === "number" ? NUMBER_CODES[code] : undefined;
  if (status && target.route.id === "number" && target.number) return { number: target.number.phoneNumberId, status };
  return null;
}

export async function applyEffect(deps: { directory: Directory; clock: Clock; logger: Logger }, effect: Effect): Promise<void> {
  const updatedAt = deps.clock.now();
  if ("waba" in effect) {
    await deps.directory.updateWaba(effect.waba, { status: "token_revoked", updatedAt });
    deps.logger.warn("upstream revoked a WABA token", { waba_id: effect.waba });
  } else {
    await deps.directory.updateNumber(effect.number, { status: effect.status, updatedAt });
    deps.logger.warn("upstream changed a number's state", { phone_number_id: effect.number, status: effect.status });
  }
}

/**
 * Passes an upstream error body to the caller chunk by chunk, untouched and without waiting, while
 * keeping a copy of its first 64 KB; once it has ended, a body that fit is handed to `inspect`.
 * (Buffering the body first would hold the caller's answer back by a round of reads; teeing would
 * tie the caller's pace to the copy's. A pass-through copy costs neither.)
 */
export function inspectedBody(body: ReadableStream<Uint8Array>, inspect: (bytes: Uint8Array) => void): ReadableStream<Uint8Array> {
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
