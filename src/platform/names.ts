/**
 * The upstream platform's own words. The repository writes a neutral word, `chat`, in place of the
 * platform's own (docs/operations.md#the-platforms-words): in the product marker of bodies, the object name of webhook
 * events, the business-profile edge and the business-management usage type. The real platform
 * knows only its own word, so an operator in front of it sets PLATFORM_NAME to that word and every
 * place Switchboard writes or matches one of these follows it; the tests speak the neutral word.
 * Switchboard relays whatever upstream sends: these matter only where it matches a path or writes
 * such a body itself (the allow-list, test events, the simulator).
 */
export interface PlatformNames {
  /** The word itself (PLATFORM_NAME). */
  readonly word: string;
  /** `messaging_product` in bodies. */
  readonly product: string;
  /** `object` of a webhook event. */
  readonly webhookObject: string;
  /** The allow-listed edge of a number's business profile. */
  readonly businessProfileEdge: string;
  /** The `type` of the platform's business-use-case usage header. */
  readonly businessManagement: string;
}

/** The neutral word (docs/operations.md#the-platforms-words), the default. */
export const NEUTRAL_WORD = "chat";

/** The names for a platform word: lower-case letters, digits and `_`, as the platform's are. */
export const PLATFORM_WORD = /^[a-z][a-z0-9_]{0,31}$/;

export function platformNames(word: string = NEUTRAL_WORD): PlatformNames {
  return Object.freeze({
    word,
    product: word,
    webhookObject: `${word}_business_account`,
    businessProfileEdge: `${word}_business_profile`,
    businessManagement: `${word}_business_management`,
  });
}
