import { auditEntry, type AuditContext } from "../audit/entry.ts";
import type { Deps } from "../deps.ts";
import type { AuditEntry } from "../store/audit.ts";
import type { Manifest } from "./manifest.ts";

/**
 * A backup's audit entry: who took it, its name, size and checksum. A backup is files at its
 * target, not rows, so no transaction holds both: the entry is written once the backup is verified
 * and stored, and a backup that failed leaves none.
 */
export function backupEntry(deps: Pick<Deps, "clock" | "random">, manifest: Manifest, by: AuditContext): AuditEntry {
  return auditEntry(deps, by, "backup.create", { kind: "backup", id: manifest.name }, null, {
    name: [null, manifest.name],
    bytes: [null, manifest.bytes],
    sha256: [null, manifest.sha256],
  });
}

/** Waits for a backup being taken and records who took it (backupEntry). */
export async function recordedBackup(
  deps: Pick<Deps, "store" | "clock" | "random">,
  taken: Promise<Manifest>,
  by: AuditContext,
): Promise<Manifest> {
  const manifest = await taken;
  await deps.store.audit.record(backupEntry(deps, manifest, by));
  return manifest;
}

/**
 * Who downloaded a backup (the whole database, secrets sealed): recorded before its first byte is
 * sent, so a download whose entry cannot be written is refused rather than left unrecorded.
 */
export async function recordDownload(
  deps: Pick<Deps, "store" | "clock" | "random">,
  name: string,
  bytes: number,
  by: AuditContext,
): Promise<void> {
  await deps.store.audit.record(
    auditEntry(deps, by, "backup.download", { kind: "backup", id: name }, null, { bytes: [null, bytes] }),
  );
}
