import type { PlatformNames } from "../platform/names.ts";

/**
 * The synthetic event of Send test (docs/webhooks.md#test-events; a coexistence
 * pre-flight check sends the same event): a `messages` event
 * with top-level `"proxy_test": true`, a message id starting `wamid.proxy_test.` and a fixed text.
 */
export const TEST_MESSAGE_TEXT =
  "This is a test event from Switchboard. Production handlers should skip events with proxy_test.";

export function testEventBody(
  names: PlatformNames,
  input: {
    wabaId: string;
    phoneNumberId: string;
    displayPhoneNumber: string | null;
    messageId: string;
    now: number;
  },
): Uint8Array<ArrayBuffer> {
  const event = {
    object: names.webhookObject,
    proxy_test: true,
    entry: [
      {
        id: input.wabaId,
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: names.product,
              metadata: { display_phone_number: input.displayPhoneNumber ?? "", phone_number_id: input.phoneNumberId },
              contacts: [{ profile: { name: "Switchboard test" }, wa_id: "15550000000" }],
              messages: [
                {
                  from: "15550000000",
                  id: input.messageId,
                  timestamp: String(Math.floor(input.now / 1000)),
                  type: "text",
                  text: { body: TEST_MESSAGE_TEXT },
                },
              ],
            },
          },
        ],
      },
    ],
  };
  // Written by us, not relayed: serialising our own value is fine here.
  return new TextEncoder().encode(JSON.stringify(event));
}
