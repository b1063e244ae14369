import { createHmac } from "node:crypto";

/** The upstream platform's `appsecret_proof`: hex HMAC-SHA256 of the access token, keyed with the app secret. */
export function appsecretProof(accessToken: string, appSecret: string): string {
  return createHmac("sha256", appSecret).update(accessToken).digest("hex");
}
