import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { Manifest } from "./manifest.ts";

/**
 * A backup's manifest is authenticated, not only checksummed: whoever can write where backups are
 * kept could otherwise change a backup and recompute its sha256. The MAC is HMAC-SHA256 under a
 * key of its own, derived from ENCRYPTION_KEY with HKDF-SHA256 and this label, so that the key that
 * seals secrets is never used for anything else. It covers every field of the manifest but `mac`
 * itself, the sha256 of the file and its uncompressed size among them (canonical below).
 */
const LABEL = "switchboard backup manifest mac v1";

/** The manifests' MAC key of a deployment, from its ENCRYPTION_KEY. */
export function manifestKey(encryptionKey: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", encryptionKey, new Uint8Array(0), LABEL, 32));
}

/** JSON with every object's keys in sorted order and no spaces: the bytes the MAC is computed over. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonical(field)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function macOf(fields: Record<string, unknown>, key: Uint8Array): string {
  const { mac: _left, ...covered } = fields;
  return createHmac("sha256", key).update(canonical(covered)).digest("hex");
}

/** The manifest with its MAC. */
export function signManifest(manifest: Omit<Manifest, "mac">, key: Uint8Array): Manifest {
  return { ...manifest, mac: macOf(manifest, key) };
}

/** Whether the manifest's MAC is there and right, by every field it was given (unknown ones too). */
export function manifestMac(manifest: Manifest, key: Uint8Array): "valid" | "missing" | "invalid" {
  if (manifest.mac === undefined) return "missing";
  const expected = Buffer.from(macOf(manifest, key), "hex");
  return timingSafeEqual(expected, Buffer.from(manifest.mac, "hex")) ? "valid" : "invalid";
}
