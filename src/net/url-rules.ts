import { blockedReason, type AddressPolicy } from "./address-policy.ts";
import { formatIp, parseIp } from "../ip/ip.ts";

export const MAX_URL_LENGTH = 2048;

export interface UrlRules {
  /** DEV_MODE: plain http is allowed too. */
  allowHttp: boolean;
  policy: AddressPolicy;
}

/** `address`: the host when it is an IP literal, in the form a request is sent to; null for a name. */
export type UrlCheck = { ok: true; url: URL; address: string | null } | { ok: false; reason: string };

/**
 * docs/webhooks.md#url-rules rules 1 to 3, and rule 4 for IP literals (names are resolved and checked at each
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
    return {
      ok: false,
      reason: rules.allowHttp ? "the URL must start with https:// or http://" : "the URL must start with https://",
    };
  }
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "the URL must not contain credentials" };
  if (url.hostname === "") return { ok: false, reason: "the URL has no host" };
  const literal = parseIp(url.hostname);
  if (literal) {
    const blocked = blockedReason(url.hostname, rules.policy);
    if (blocked) return { ok: false, reason: `the address ${blocked}` };
    return { ok: true, url, address: formatIp(literal) };
  }
  return { ok: true, url, address: null };
}

/** Rules with the answers they gave so far, for a caller that checks the same URLs again and again. */
export interface UrlChecker {
  rules: UrlRules;
  check(raw: string): UrlCheck;
}

/**
 * Every delivery attempt checks its endpoint's URL again (a URL saved under other rules, or before
 * a fix of them, must still be refused). The answer for one URL under the same rules never
 * changes, so it is kept: parsing and checking an IP literal cost about as much as signing.
 */
export function urlChecker(rules: UrlRules, capacity = 10_000): UrlChecker {
  const answers = new Map<string, UrlCheck>();
  return {
    rules,
    check(raw) {
      let answer = answers.get(raw);
      if (answer === undefined) {
        answer = checkWebhookUrl(raw, rules);
        if (answers.size >= capacity) answers.clear();
        answers.set(raw, answer);
      }
      return answer;
    },
  };
}
