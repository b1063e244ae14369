import type { PlatformNames } from "../platform/names.ts";
import type { EventField } from "./fields.ts";

/**
 * The synthetic event of Send test (docs/webhooks.md#test-events; a coexistence pre-flight check
 * sends the `messages` one): one change of the chosen field in the platform's own shape, with
 * top-level `"proxy_test": true`, message ids starting `wamid.proxy_test.` and a fixed text.
 */
export const TEST_MESSAGE_TEXT =
  "This is a test event from Switchboard. Production handlers should skip events with proxy_test.";

export interface TestEventInput {
  field: EventField;
  wabaId: string;
  phoneNumberId: string;
  displayPhoneNumber: string | null;
  messageId: string;
  now: number;
}

/** Who the test's messages and contacts are from. */
const TEST_CONTACT = "15550000000";
const TEST_NAME = "Switchboard test";
const TEMPLATE = {
  message_template_id: 0,
  message_template_name: "proxy_test",
  message_template_language: "en_US",
};

type ValueOf = (c: { names: PlatformNames; input: TestEventInput; display: string; unix: string }) => object;

function numberValue(names: PlatformNames, input: TestEventInput, display: string) {
  return {
    messaging_product: names.product,
    metadata: { display_phone_number: display, phone_number_id: input.phoneNumberId },
  };
}

const textMessage = (input: TestEventInput, unix: string, from: string) => ({
  from,
  id: input.messageId,
  timestamp: unix,
  type: "text",
  text: { body: TEST_MESSAGE_TEXT },
});

/** Each field's `value`, shaped as the platform writes that field. */
const VALUES: Record<EventField, ValueOf> = {
  messages: ({ names, input, display, unix }) => ({
    ...numberValue(names, input, display),
    contacts: [{ profile: { name: TEST_NAME }, wa_id: TEST_CONTACT }],
    messages: [textMessage(input, unix, TEST_CONTACT)],
  }),
  message_template_status_update: () => ({ event: "APPROVED", ...TEMPLATE, reason: "NONE" }),
  message_template_quality_update: () => ({
    previous_quality_score: "GREEN",
    new_quality_score: "YELLOW",
    ...TEMPLATE,
  }),
  message_template_components_update: () => ({ ...TEMPLATE, message_template_element: TEST_MESSAGE_TEXT }),
  template_category_update: () => ({ ...TEMPLATE, previous_category: "UTILITY", new_category: "MARKETING" }),
  account_update: ({ display }) => ({ phone_number: display, event: "VERIFIED_ACCOUNT" }),
  account_alerts: ({ input }) => ({
    entity_type: "WABA",
    entity_id: input.wabaId,
    alert_severity: "INFORMATIONAL",
    alert_status: "NONE",
    alert_type: "proxy_test",
    alert_description: TEST_MESSAGE_TEXT,
  }),
  phone_number_quality_update: ({ display }) => ({
    display_phone_number: display,
    event: "UNFLAGGED",
    current_limit: "TIER_1K",
  }),
  phone_number_name_update: ({ display }) => ({
    display_phone_number: display,
    decision: "APPROVED",
    requested_verified_name: TEST_NAME,
    rejection_reason: null,
  }),
  business_capability_update: () => ({ max_daily_conversation_per_phone: 1000, max_phone_numbers_per_business: 2 }),
  security: ({ display }) => ({ display_phone_number: display, event: "PIN_CHANGED", requester: TEST_CONTACT }),
  history: ({ names, input, display, unix }) => ({
    ...numberValue(names, input, display),
    history: [
      {
        metadata: { phase: 0, chunk_order: 1, progress: 100 },
        threads: [
          {
            id: TEST_CONTACT,
            messages: [{ ...textMessage(input, unix, TEST_CONTACT), history_context: { status: "READ" } }],
          },
        ],
      },
    ],
  }),
  smb_message_echoes: ({ names, input, display, unix }) => ({
    ...numberValue(names, input, display),
    message_echoes: [{ ...textMessage(input, unix, display), to: TEST_CONTACT }],
  }),
  smb_app_state_sync: ({ names, input, display, unix }) => ({
    ...numberValue(names, input, display),
    state_sync: [
      {
        type: "contact",
        contact: { full_name: TEST_NAME, first_name: "Switchboard", phone_number: TEST_CONTACT },
        action: "add",
        metadata: { timestamp: unix },
      },
    ],
  }),
};

export function testEventBody(names: PlatformNames, input: TestEventInput): Uint8Array<ArrayBuffer> {
  const value = VALUES[input.field]({
    names,
    input,
    display: input.displayPhoneNumber ?? "",
    unix: String(Math.floor(input.now / 1000)),
  });
  const event = {
    object: names.webhookObject,
    proxy_test: true,
    entry: [{ id: input.wabaId, changes: [{ field: input.field, value }] }],
  };
  // Written by us, not relayed: serialising our own value is fine here.
  return new TextEncoder().encode(JSON.stringify(event));
}
