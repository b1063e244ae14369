import type { Random } from "../runtime/random.ts";

/** Standard Webhooks secrets: `whsec_` and base64 of the HMAC key. */
const PREFIX = "whsec_";

/** A new signing secret: 32 random bytes (the issue asks for at least 24). */
export function generateSecret(random: Random): string {
  return `${PREFIX}${Buffer.from(random.bytes(32)).toString("base64")}`;
}

/**
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` for one secret
 * (docs/webhooks.md#the-request-and-its-signature).
 */
export function sign(secret: string, msgId: string, timestamp: number, body: Uint8Array): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
  // Bun's own hasher: node:crypto's createHmac costs about twice as much per delivery.
  const mac = new Bun.CryptoHasher("sha256", key).update(`${msgId}.${timestamp}.`).update(body).digest("base64");
  return `v1,${mac}`;
}

/** The webhook-signature header: one signature per secret, space-separated (newest first). */
export function signatureHeader(secrets: string[], msgId: string, timestamp: number, body: Uint8Array): string {
  return secrets.map((secret) => sign(secret, msgId, timestamp, body)).join(" ");
}
