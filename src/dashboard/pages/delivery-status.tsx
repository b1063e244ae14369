import { Badge, type Tone } from "../../html/components.tsx";
import type { AttemptShape, DeliveryShape } from "../../html/webhook-shapes.ts";

export const deliveryPath = (id: string) => `/dashboard/deliveries/${encodeURIComponent(id)}`;

const STATUS: Record<DeliveryShape["status"], { text: string; tone: Tone }> = {
  pending: { text: "In progress", tone: "warn" },
  succeeded: { text: "Succeeded", tone: "ok" },
  parked: { text: "Parked", tone: "bad" },
};

/** Why a delivery was parked, in words. */
export function parkedText(reason: DeliveryShape["parked_reason"]): string {
  switch (reason) {
    case "attempts_exhausted":
      return "Every attempt failed; it will not be retried automatically. Replay it once the receiver works.";
    case "gone":
      return "The receiver answered 410 Gone, so the endpoint was disabled. Enable it, then replay.";
    case "endpoint_disabled":
      return "The endpoint was disabled when this delivery came due. Enable it, then replay.";
    case "payload_missing":
      return "The payload was deleted before it could be delivered.";
    default:
      return "It will not be retried automatically.";
  }
}

export function DeliveryStatus(props: { delivery: DeliveryShape }) {
  const s = STATUS[props.delivery.status];
  return <Badge tone={s.tone} text={s.text} />;
}

/** An attempt's outcome in one line: the HTTP status, or why no answer came (blocked address, time-out…). */
export function attemptOutcome(a: AttemptShape): JSX.Element {
  if (a.error?.startsWith("blocked: ")) {
    return (
      <>
        <Badge tone="bad" text="Blocked" /> <span safe>{a.error.slice("blocked: ".length)}</span>
      </>
    );
  }
  if (a.status_code !== null) {
    const ok = a.status_code >= 200 && a.status_code < 300;
    return <Badge tone={ok ? "ok" : "bad"} text={`HTTP ${a.status_code}`} />;
  }
  return (
    <>
      <Badge tone="bad" text="No answer" /> <span safe>{a.error ?? ""}</span>
    </>
  );
}
