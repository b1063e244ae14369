/**
 * The upstream platform's own words, neutral as SPEC writes them (its brand names replaced):
 * the product marker in bodies and the object name of webhook events. Switchboard relays whatever
 * upstream sends; these are used only where we write such a body ourselves (test events, simulator).
 */
export const PRODUCT = "chat";
export const WEBHOOK_OBJECT = "chat_business_account";
