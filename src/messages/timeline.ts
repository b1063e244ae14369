import { AppError } from "../errors/catalog.ts";
import { iso } from "../http/iso-time.ts";
import { requestView } from "../requests/queries.ts";
import type { Deps } from "../deps.ts";
import { attemptView, deliveryView } from "../webhooks/views.ts";

/**
 * A message's whole timeline (issue 19): the proxied call that sent it, when it went through
 * Switchboard, and every event that mentions it (its statuses: sent, delivered, read, failed with
 * its error; or the message itself when it was received), each with its deliveries to the
 * account's endpoints and their attempts. Events are found by the index ingress writes with
 * them; they go with their retention.
 */
/** A sent message's statuses in the order it goes through them; others after. */
const STATUS_ORDER = ["sent", "delivered", "read", "played", "failed", "deleted"];

export async function messageTimeline(deps: Pick<Deps, "store">, accountId: string, pasted: string) {
  const messageId = pasted.trim().replace(/^["']|["']$/g, "");
  const [sentBy, events] = await Promise.all([
    deps.store.requests.byMessageId(accountId, messageId),
    deps.store.history.messageEvents(accountId, messageId),
  ]);
  if (sentBy.length === 0 && events.length === 0) {
    throw new AppError(
      "not_found",
      "No call or webhook event of this account mentions this message id (it may be past the retention window).",
    );
  }
  // Events received in the same instant (the platform may send a message's statuses together,
  // and concurrent posts commit in any order) are shown in the order a message goes through.
  const step = (e: { kind: string; status: string | null }) =>
    e.kind === "inbound" ? -1 : STATUS_ORDER.indexOf(e.status ?? "");
  events.sort((a, b) => a.receivedAt - b.receivedAt || step(a) - step(b));
  return {
    message_id: messageId,
    sent_by: sentBy.map((r) => requestView(deps, r)),
    events: await Promise.all(
      events.map(async (e) => ({
        event_id: e.eventId,
        received_at: iso(e.receivedAt),
        kind: e.kind,
        status: e.status,
        error_code: e.errorCode,
        phone_number_id: e.phoneNumberId,
        deliveries: await Promise.all(
          e.deliveries.map(async (d) => ({
            ...deliveryView(d),
            attempts: (await deps.store.history.attempts(d.id)).map(attemptView),
          })),
        ),
      })),
    ),
  };
}

export type Timeline = Awaited<ReturnType<typeof messageTimeline>>;
