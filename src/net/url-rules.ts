import { blockedReason, type AddressPolicy } from "./address-policy.ts";
import { parseIp } from "./ip.ts";

export const MAX_URL_LENGTH = 2048;

export interface UrlRules {
  /** DEV_MODE: plain http is allowed too. */
  allowHttp: boolean;
  policy: AddressPolicy;
}

export type UrlCheck = { ok: true; url: URL; ipLiteral: string | null } | { ok: false; reason: string };

/**
 * SPEC 6.7 rules 1 to 3, and rule 4 for IP literals (names are resolved and checked at each
 * attempt). The URL parser already turns `0x7f.1`, `2130706433` and the like into a dotted quad;
 * the address check parses every spelling again itself rather than rely on that.
 */
export function checkWebhookUrl(raw: string, rules: UrlRules): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `the URL is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (url.protocol !== "https:" && !(rules.allowHttp && url.protocol === "http:")) {
    return { ok: false, reason: rules.allowHttp ? "the URL must start with https:// or http://" : "the URL must start with https://" };
  }
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "the URL must not contain credentials" };
  if (url.hostname === "") return { ok: false, reason: "the URL has no host" };
  const literal = parseIp(url.hostname);
  if (literal) {
    const blocked = blockedReason(url.hostname, rules.policy);
    if (blocked) return { ok: false, reason: `the address ${blocked}` };
    return { ok: true, url, ipLiteral: url.hostname };
  }
  return { ok: true, url, ipLiteral: null };
}
