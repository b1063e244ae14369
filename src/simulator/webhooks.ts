import type { PlatformNames } from "../platform/names.ts";
import type { Fetch } from "../runtime/fetch.ts";
import { hubSignature } from "../webhooks/hub-signature.ts";
import type { AcceptedMessage, SmbSyncType } from "./call.ts";
import type { SimWorld } from "./world.ts";

/** The statuses a sent message goes through, in order, as the platform reports them. */
export const STATUS_SEQUENCE = ["sent", "delivered", "read"] as const;
export type MessageStatus = (typeof STATUS_SEQUENCE)[number];

function numberMetadata(world: SimWorld, phoneNumberId: string) {
  const number = world.numbers.get(phoneNumberId);
  if (!number) throw new Error(`simulator: no number ${phoneNumberId}`);
  return {
    wabaId: number.wabaId,
    metadata: { display_phone_number: number.displayPhoneNumber.replace(/\D/g, ""), phone_number_id: phoneNumberId },
  };
}

/** One `messages` change of one number, wrapped as the platform sends it. */
function messagesEvent(names: PlatformNames, wabaId: string, value: Record<string, unknown>): string {
  return JSON.stringify({
    object: names.webhookObject,
    entry: [{ id: wabaId, changes: [{ field: "messages", value: { messaging_product: names.product, ...value } }] }],
  });
}

export function statusEvent(
  world: SimWorld,
  names: PlatformNames,
  message: AcceptedMessage,
  status: MessageStatus,
  unixSeconds: number,
): { wabaId: string; body: string } {
  const { wabaId, metadata } = numberMetadata(world, message.phoneNumberId);
  const body = messagesEvent(names, wabaId, {
    metadata,
    statuses: [
      { id: message.messageId, status, timestamp: String(unixSeconds), recipient_id: message.to.replace(/\D/g, "") },
    ],
  });
  return { wabaId, body };
}

export function inboundEvent(
  world: SimWorld,
  names: PlatformNames,
  input: { phoneNumberId: string; from: string; text: string; messageId: string; unixSeconds: number },
): { wabaId: string; body: string } {
  const { wabaId, metadata } = numberMetadata(world, input.phoneNumberId);
  const body = messagesEvent(names, wabaId, {
    metadata,
    contacts: [{ profile: { name: "Simulated Customer" }, wa_id: input.from }],
    messages: [
      {
        from: input.from,
        id: input.messageId,
        timestamp: String(input.unixSeconds),
        type: "text",
        text: { body: input.text },
      },
    ],
  });
  return { wabaId, body };
}

export interface WebhookSenderOptions {
  /** Switchboard's ingress, e.g. http://127.0.0.1:8080/webhooks/upstream. */
  url: string;
  world: SimWorld;
  fetch?: Fetch;
  /** Reports a webhook Switchboard did not accept (the simulator does not retry). */
  onResult?: (result: { body: string; status: number | null; error?: string }) => void;
}

/** Posts platform events to Switchboard's ingress, signed with the WABA's app secret as the platform does. */
export function webhookSender(options: WebhookSenderOptions) {
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  return async function post(event: { wabaId: string; body: string }): Promise<number | null> {
    const waba = options.world.wabas.get(event.wabaId);
    if (!waba) throw new Error(`simulator: no WABA ${event.wabaId}`);
    try {
      const response = await send(options.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-hub-signature-256": hubSignature(waba.appSecret, new TextEncoder().encode(event.body)),
        },
        body: event.body,
      });
      await response.arrayBuffer();
      options.onResult?.({ body: event.body, status: response.status });
      return response.status;
    } catch (error) {
      options.onResult?.({ body: event.body, status: null, error: (error as Error).message });
      return null;
    }
  };
}

/** The events a coexistence sync sends (contacts, then chat history), one change each, as the platform sends them. */
export function smbSyncEvent(
  world: SimWorld,
  names: PlatformNames,
  input: { phoneNumberId: string; syncType: SmbSyncType; messageId: string; unixSeconds: number },
): { wabaId: string; body: string } {
  const { wabaId, metadata } = numberMetadata(world, input.phoneNumberId);
  const timestamp = String(input.unixSeconds);
  const customer = "15550107001";
  const value =
    input.syncType === "smb_app_state_sync"
      ? {
          state_sync: [
            {
              type: "contact",
              contact: { full_name: "Ada Lovelace", first_name: "Ada", phone_number: customer },
              action: "add",
              metadata: { timestamp },
            },
          ],
        }
      : {
          history: [
            {
              metadata: { phase: 0, chunk_order: 1, progress: 100 },
              threads: [
                {
                  id: customer,
                  messages: [
                    {
                      from: customer,
                      id: input.messageId,
                      timestamp,
                      type: "text",
                      text: { body: "Hello, is my order ready?" },
                      history_context: { status: "READ" },
                    },
                  ],
                },
              ],
            },
          ],
        };
  const body = JSON.stringify({
    object: names.webhookObject,
    entry: [
      {
        id: wabaId,
        changes: [{ field: input.syncType, value: { messaging_product: names.product, metadata, ...value } }],
      },
    ],
  });
  return { wabaId, body };
}
