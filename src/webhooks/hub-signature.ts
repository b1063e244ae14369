import { timingSafeEqual } from "node:crypto";

/** `sha256=<hex HMAC-SHA256 of the raw body>`, as upstream sends it in X-Hub-Signature-256. */
export function hubSignature(secret: string, body: Uint8Array): string {
  return `sha256=${new Bun.CryptoHasher("sha256", secret).update(body).digest("hex")}`;
}

/** Constant-time check of an X-Hub-Signature-256 header against one secret. */
export function hubSignatureMatches(header: string | null, secret: string, body: Uint8Array): boolean {
  if (header === null) return false;
  const given = Buffer.from(header.trim().toLowerCase());
  const expected = Buffer.from(hubSignature(secret, body));
  return given.length === expected.length && timingSafeEqual(given, expected);
}
