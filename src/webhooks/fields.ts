/** docs/webhooks.md#event-fields: the only event field names an endpoint may subscribe to. */
export const EVENT_FIELDS = [
  "messages",
  "message_template_status_update",
  "message_template_quality_update",
  "message_template_components_update",
  "template_category_update",
  "account_update",
  "account_alerts",
  "phone_number_quality_update",
  "phone_number_name_update",
  "business_capability_update",
  "security",
  "history",
  "smb_message_echoes",
  "smb_app_state_sync",
] as const;

export type EventField = (typeof EVENT_FIELDS)[number];

const KNOWN = new Set<string>(EVENT_FIELDS);
export const isEventField = (name: string): name is EventField => KNOWN.has(name);

/**
 * Payloads carrying this field are deleted as soon as their delivery succeeds or parks (docs/webhooks.md#retention).
 */
export const HISTORY_FIELD: EventField = "history";
