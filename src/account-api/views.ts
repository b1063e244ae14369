import { iso } from "../http/iso-time.ts";
import { numberView } from "../numbers/views.ts";
import { causeText, numberCondition, numberRateLimit } from "../numbers/condition.ts";
import type { Config } from "../config/config.ts";
import type { Directory } from "../store/store.ts";
import type { Notification, PhoneNumber } from "../store/types.ts";

/** A number as its owner sees it: the operator's view plus what the state means and its rate limit. */
export function accountNumberView(
  deps: { store: { directory: Directory }; config: Pick<Config, "embeddedSignup"> },
  number: PhoneNumber,
) {
  const waba = deps.store.directory.waba(number.wabaId);
  const condition = numberCondition(number, waba, { signup: deps.config.embeddedSignup !== null });
  return {
    ...numberView(number),
    waba_status: waba?.status ?? "disconnected",
    usable: condition.usable,
    status_text: condition.label,
    action: condition.action,
    // Why, as it happened: the upstream error that set the state, when, and the call that got it.
    cause: condition.cause && {
      of: condition.cause.of,
      code: condition.cause.code,
      message: condition.cause.message,
      at: iso(condition.cause.at),
      request_id: condition.cause.requestId,
      text: causeText(condition.cause),
    },
    rate_limit_per_second: numberRateLimit(number),
  };
}

export const notificationView = (n: Notification) => ({
  id: n.id,
  kind: n.kind,
  subject: n.subject,
  body: n.body,
  emailed_at: iso(n.emailedAt),
  created_at: iso(n.createdAt),
});
