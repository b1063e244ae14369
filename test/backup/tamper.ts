import { expect } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { archiveOf, unpacker } from "../../src/backup/archive.ts";
import { compressInto, decompressInto } from "../../src/backup/codec.ts";
import type { Manifest } from "../../src/backup/manifest.ts";
import { requestLogPath } from "../../src/store/sqlite/request-log-file.ts";
import { manifestKey, signManifest } from "../../src/backup/manifest-mac.ts";
import { TEST_ENCRYPTION_KEY } from "../support/harness.ts";
import { runMain } from "../support/process.ts";

/** What someone holding the deployment's ENCRYPTION_KEY signs manifests with (the tests' key). */
export const TEST_MAC_KEY = manifestKey(Buffer.from(TEST_ENCRYPTION_KEY, "base64"));

export const readManifest = (backup: string): Manifest => JSON.parse(readFileSync(`${backup}.json`, "utf8"));

export function writeManifest(backup: string, manifest: Record<string, unknown>): void {
  writeFileSync(`${backup}.json`, JSON.stringify(manifest, null, 2));
}

/** A backup's two files unpacked into `dir`, as restore unpacks them. */
export async function unpackBackup(backup: string, dir: string): Promise<{ database: string; requestLog: string }> {
  mkdirSync(dir, { recursive: true });
  const files = { database: join(dir, "switchboard.db"), requestLog: join(dir, "switchboard-requests.db") };
  await decompressInto(
    backup,
    unpacker({ "switchboard.db": files.database, "switchboard-requests.db": files.requestLog }),
    Number.MAX_SAFE_INTEGER,
  );
  return files;
}

/**
 * Packs `database` and `requestLog` as the backup file `backup` (replacing it), as an attacker who
 * can write the backup store would; the manifest beside it gets the new file's size, sha256 and
 * uncompressed size over `manifest`, and `sign`: the MAC of someone holding the key, the old one
 * kept (an attacker without it), or none.
 */
export async function repack(
  backup: string,
  files: { database: string; requestLog: string },
  manifest: Manifest,
  sign: "with the key" | "keep the old mac" | "no mac",
): Promise<Manifest> {
  const staged = `${backup}.staged`;
  const packed = await compressInto(archiveOf([files.database, files.requestLog], 0), staged);
  writeFileSync(backup, readFileSync(staged));
  const { mac, ...fields } = manifest;
  const updated = { ...fields, bytes: packed.bytes, sha256: packed.sha256, uncompressed_bytes: packed.sourceBytes };
  const written =
    sign === "with the key" ? signManifest(updated, TEST_MAC_KEY) : sign === "no mac" ? updated : { ...updated, mac };
  writeManifest(backup, written);
  return written;
}

/** The manifest beside `backup` with `fields` over it, signed again with the key. */
export function resign(backup: string, fields: Partial<Manifest>): void {
  const { mac: _mac, ...rest } = { ...readManifest(backup), ...fields };
  writeManifest(backup, signManifest(rest, TEST_MAC_KEY));
}

/** Bytes held by the files of `dir` whose name starts with `prefix` (the target's lock file, and its journal, aside). */
function bytesOf(dir: string, prefix: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || name.includes("-lock")) continue;
    try {
      total += statSync(join(dir, name)).size;
    } catch {
      // Removed between the listing and the look.
    }
  }
  return total;
}

/**
 * `switchboard restore` in a process of its own, the disk under the target sampled meanwhile: the
 * most that files named like the target (its scratch files, its request log) held at once, the
 * lock file a server would hold too aside.
 */
export async function restoreSampled(
  args: string[],
  env: Record<string, string>,
  targetDir: string,
  targetPrefix: string,
): Promise<{ code: number; stdout: string; stderr: string; peakBytes: number }> {
  let peakBytes = 0;
  const sample = () => {
    peakBytes = Math.max(peakBytes, bytesOf(targetDir, targetPrefix));
  };
  const sampler = setInterval(sample, 2);
  try {
    const result = await runMain(["restore", ...args], env);
    sample();
    return { ...result, peakBytes };
  } finally {
    clearInterval(sampler);
  }
}

/** A restore's refusal: one line naming `reason`, exit 2, nothing on standard output. */
export function expectRefused(result: { code: number; stdout: string; stderr: string }, reason: string): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe("");
  const lines = result.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("switchboard: restore refused: ");
  expect(lines[0]).toContain(reason);
}

/** What a refused restore must have left: no database, no request log, no scratch file (only the lock file a server would make too). */
export function nothingWritten(target: string): void {
  expect(existsSync(target)).toBe(false);
  expect(existsSync(requestLogPath(target))).toBe(false);
  const base = basename(target).replace(/\.db$/, "");
  expect(readdirSync(dirname(target)).filter((name) => name.startsWith(base) && name !== `${base}.db-lock`)).toEqual(
    [],
  );
}
