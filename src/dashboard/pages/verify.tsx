import { Notice } from "../../html/components.tsx";
import type { VerifyResult } from "../../webhooks/verify.ts";

/** What Verify found (docs/webhooks.md#verify), in a sentence. */
export function VerifyOutcome(props: { result: VerifyResult }) {
  const r = props.result;
  if (r.verified) {
    return (
      <Notice tone="ok">
        <p>Verified: the receiver answered the challenge, as the platform's subscription check expects.</p>
      </Notice>
    );
  }
  const why =
    r.status_code === null
      ? `The request failed: ${r.error ?? "no answer"}.`
      : `It answered HTTP ${r.status_code} without the challenge. Check the verify token your bot expects.`;
  return (
    <Notice tone="bad">
      <p safe>Not verified. {why}</p>
    </Notice>
  );
}
