import { createCipheriv, createDecipheriv } from "node:crypto";
import type { Random } from "../runtime/random.ts";

/**
 * AES-256-GCM for secrets at rest (upstream tokens, app secrets, signing secrets).
 * Stored form: `v1.<iv b64>.<ciphertext+tag b64>`; the version lets a later key rotation coexist.
 */
export interface Sealer {
  seal(plain: string): string;
  open(sealed: string): string;
}

/** A stored secret that this key cannot open: almost always a different ENCRYPTION_KEY. */
export class SealError extends Error {}

export function createSealer(key: Uint8Array, random: Random): Sealer {
  if (key.length !== 32) throw new Error("encryption key must be 32 bytes");
  return {
    seal(plain) {
      const iv = random.bytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `v1.${Buffer.from(iv).toString("base64")}.${body.toString("base64")}`;
    },
    open(sealed) {
      const [version, ivText, bodyText] = sealed.split(".");
      if (version !== "v1" || !ivText || !bodyText) throw new SealError("a stored secret is not in the sealed format");
      const body = Buffer.from(bodyText, "base64");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(ivText, "base64"));
      decipher.setAuthTag(body.subarray(body.length - 16));
      try {
        return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString("utf8");
      } catch {
        throw new SealError(
          "a stored secret cannot be decrypted: the database was written with another ENCRYPTION_KEY",
        );
      }
    },
  };
}
