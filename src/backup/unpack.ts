import { createWriteStream } from "node:fs";
import { SealError, type Sealer } from "../crypto/sealer.ts";
import { openRequestLogFile } from "../store/sqlite/request-log-file.ts";
import { ArchiveError, unpacker } from "./archive.ts";
import { decompressInto, fileDigest, PRIVATE_FILE, TooLarge } from "./codec.ts";
import {
  DamagedDatabaseError,
  inspectDatabase,
  inspectRequestLog,
  NewerSchemaError,
  openSealedSecrets,
} from "./inspect.ts";
import type { Manifest } from "./manifest.ts";
import { manifestMac } from "./manifest-mac.ts";

/** A restore that will not go ahead; the message says why in one line, and nothing was written. */
export class RestoreRefused extends Error {}

/**
 * An unsigned backup (the release before) states no uncompressed size: it may decompress to this
 * many times its size, and at least UNSIGNED_FLOOR bytes (a small database compresses far better).
 */
const UNSIGNED_RATIO = 100;
const UNSIGNED_FLOOR = 64 * 1024 * 1024;

/** Where a backup's files are unpacked before they are checked: beside the target, removed whatever happens. */
export interface Scratch {
  database: string;
  requestLog: string;
}

/**
 * The manifest's MAC, under the key derived from ENCRYPTION_KEY (manifest-mac.ts). A manifest
 * without one (the release before signed none) is refused unless `trustUnsigned` says it is known.
 */
export function checkMac(manifest: Manifest, key: Uint8Array, trustUnsigned: boolean): void {
  const mac = manifestMac(manifest, key);
  if (mac === "invalid") {
    throw new RestoreRefused(
      "the backup's manifest does not verify (its MAC) under this ENCRYPTION_KEY: the backup or its manifest was changed, or it was taken under another key",
    );
  }
  if (mac === "missing" && !trustUnsigned) {
    throw new RestoreRefused(
      "the backup's manifest is not signed (no MAC: taken by an older release, or stripped), so nothing proves where it came from; if you know, pass --trust-unsigned to restore it anyway",
    );
  }
}

/** The stored file is the one the manifest describes, by size and sha256. */
export async function checkDigest(local: string, manifest: Manifest): Promise<void> {
  const stored = await fileDigest(local);
  if (stored.bytes !== manifest.bytes) {
    const sizes = `${stored.bytes} bytes where its manifest says ${manifest.bytes}`;
    throw new RestoreRefused(`the backup is ${sizes}: it is truncated or damaged`);
  }
  if (stored.sha256 !== manifest.sha256) {
    throw new RestoreRefused("the backup's sha256 does not match its manifest: the file is damaged");
  }
}

/**
 * Decompresses the backup into the scratch files, writing no more than the uncompressed size its
 * manifest states (an unsigned one: see UNSIGNED_RATIO): the archive's two files, or for a backup
 * of the release before its one database and an empty request log.
 */
export async function unpack(local: string, manifest: Manifest, scratch: Scratch): Promise<void> {
  const stated = manifest.uncompressed_bytes;
  const limit = stated ?? Math.max(UNSIGNED_FLOOR, UNSIGNED_RATIO * manifest.bytes);
  try {
    if (stated === undefined) {
      await decompressInto(local, createWriteStream(scratch.database, { flags: "wx", mode: PRIVATE_FILE }), limit);
      openRequestLogFile(scratch.requestLog).close();
      return;
    }
    const written = await decompressInto(
      local,
      unpacker({ "switchboard.db": scratch.database, "switchboard-requests.db": scratch.requestLog }),
      limit,
    );
    if (written.bytes !== stated) {
      throw new RestoreRefused(`the backup decompresses to ${written.bytes} bytes where its manifest states ${stated}`);
    }
  } catch (error) {
    if (error instanceof RestoreRefused) throw error;
    if (error instanceof TooLarge) {
      const whose =
        stated === undefined
          ? `the most an unsigned backup of ${manifest.bytes} bytes may`
          : "the size its manifest states";
      throw new RestoreRefused(`the backup ${error.message}, ${whose}: it was stopped there and nothing of it kept`);
    }
    if (error instanceof ArchiveError) throw new RestoreRefused(error.message);
    throw new RestoreRefused(`the backup cannot be decompressed: ${(error as Error).message}`);
  }
}

/**
 * The unpacked files are sound and this release's: integrity, schema (schema-check.ts), not newer
 * than this release, and ENCRYPTION_KEY's sealer opens every sealed secret.
 */
export function checkUnpacked(scratch: Scratch, sealer: Sealer): void {
  for (const [what, inspect, path] of [
    ["database", inspectDatabase, scratch.database],
    ["request log", inspectRequestLog, scratch.requestLog],
  ] as const) {
    try {
      inspect(path);
    } catch (error) {
      if (error instanceof DamagedDatabaseError) throw new RestoreRefused(`the backup's ${what} ${error.message}`);
      if (error instanceof NewerSchemaError) {
        throw new RestoreRefused(
          `the backup was taken by a newer Switchboard (its ${what}: ${error.message}): restore it with that version`,
        );
      }
      throw error;
    }
  }
  try {
    openSealedSecrets(scratch.database, sealer);
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    const advice = "set the ENCRYPTION_KEY of the server the backup was taken from";
    throw new RestoreRefused(`ENCRYPTION_KEY does not open the backup's sealed secrets (${error.message}): ${advice}`);
  }
}
