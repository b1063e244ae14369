/** What each event field carries (docs/webhooks.md#event-fields), shown beside its checkbox. */
export const FIELD_GUIDE: Record<string, { carries: string; coexistenceOnly?: boolean }> = {
  messages: { carries: "Inbound messages and delivery statuses (value.statuses[])" },
  message_template_status_update: { carries: "A template was approved, rejected, paused or disabled" },
  message_template_quality_update: { carries: "A template's quality score changed" },
  message_template_components_update: { carries: "A template's components were edited" },
  template_category_update: { carries: "The platform changed a template's category" },
  account_update: { carries: "WABA changes: verification, bans, partner removal" },
  account_alerts: { carries: "Messaging limit and other account alerts" },
  phone_number_quality_update: { carries: "A number's quality rating or messaging tier changed" },
  phone_number_name_update: { carries: "A display-name review finished" },
  business_capability_update: { carries: "Business-level limits changed" },
  security: { carries: "Two-step verification PIN changes and other security events" },
  history: {
    carries: "One-time chat history sync. Its payloads are deleted as soon as delivered, so they cannot be replayed",
    coexistenceOnly: true,
  },
  smb_message_echoes: { carries: "Messages sent from the business app", coexistenceOnly: true },
  smb_app_state_sync: { carries: "Contacts synced from the business app", coexistenceOnly: true },
};
