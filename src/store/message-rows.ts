import type { MessageEvent } from "./webhooks.ts";

/** An event_messages row, as both backends' drivers return it (PostgreSQL's bigints as strings). */
export function toEventMessage(row: Record<string, unknown>): Omit<MessageEvent, "deliveries"> {
  return {
    eventId: row.event_id as string,
    messageId: row.message_id as string,
    phoneNumberId: row.phone_number_id as string | null,
    kind: row.kind as MessageEvent["kind"],
    status: row.status as string | null,
    errorCode: row.error_code === null ? null : Number(row.error_code),
    receivedAt: Number(row.received_at),
  };
}
