import { Badge } from "./components.tsx";
import type { EndpointShape } from "./webhook-shapes.ts";

/** Why an endpoint is disabled and what to do, in words. */
export function disabledText(reason: EndpointShape["disabled_reason"]): string {
  if (reason === "gone") return "Disabled: the receiver answered 410 Gone. Fix the receiver, then choose Enable.";
  if (reason === "consecutive_failures")
    return "Disabled after 50 failed attempts in a row with no success for 24 hours. Fix the receiver, then choose Enable.";
  return "Disabled.";
}

export function EndpointState(props: { endpoint: EndpointShape }) {
  const e = props.endpoint;
  if (!e.enabled)
    return (
      <Badge
        tone="bad"
        text={
          e.disabled_reason === "gone"
            ? "Disabled (410 Gone)"
            : e.disabled_reason === "consecutive_failures"
              ? "Disabled (failing)"
              : "Disabled"
        }
      />
    );
  if (e.consecutive_failures >= 20) return <Badge tone="warn" text="Enabled, failing" />;
  return <Badge tone="ok" text="Enabled" />;
}
