import type { BackupLocation, S3Settings } from "../config/backup-config.ts";
import { directoryTarget } from "./directory-target.ts";
import { s3Target } from "./s3-target.ts";
import type { BackupTarget } from "./target.ts";

/** The target at a backup location: a directory (never serving `ownFiles`), or a bucket and prefix of S3. */
export function openTarget(location: BackupLocation, s3: S3Settings, ownFiles: readonly string[] = []): BackupTarget {
  switch (location.kind) {
    case "directory":
      return directoryTarget(location.path, ownFiles);
    case "s3":
      return s3Target(location, s3);
  }
}
