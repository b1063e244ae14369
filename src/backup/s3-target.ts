import { S3Client } from "bun";
import type { S3Settings } from "../config/backup-config.ts";
import type { BackupTarget } from "./target.ts";

/**
 * Backups as objects under a prefix of an S3 bucket, through Bun's own S3 client: any
 * S3-compatible store (AWS, R2, B2, MinIO, …) given its endpoint. An object appears whole once its
 * upload completes, so nothing needs sweeping.
 */
export function s3Target(location: { bucket: string; prefix: string }, settings: S3Settings): BackupTarget {
  const client = new S3Client({ ...settings, bucket: location.bucket });
  const folder = location.prefix === "" ? "" : `${location.prefix}/`;
  const key = (name: string) => `${folder}${name}`;
  const absent = (error: unknown) => (error as { code?: string }).code === "NoSuchKey";
  return {
    where: `s3://${location.bucket}/${location.prefix}`,
    async list() {
      const names: string[] = [];
      let continuationToken: string | undefined;
      do {
        const page = await client.list({ prefix: folder, continuationToken });
        for (const object of page.contents ?? []) {
          const name = object.key.slice(folder.length);
          // Only the prefix's own files, not those of a "folder" below it.
          if (name !== "" && !name.includes("/")) names.push(name);
        }
        continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
      } while (continuationToken);
      return names;
    },
    async put(name, localPath) {
      await client.write(key(name), Bun.file(localPath));
    },
    async putText(name, text) {
      await client.write(key(name), text, { type: "application/json" });
    },
    async readText(name) {
      try {
        return await client.file(key(name)).text();
      } catch (error) {
        if (absent(error)) return null;
        throw error;
      }
    },
    async open(name) {
      const file = client.file(key(name));
      try {
        const { size } = await file.stat();
        return { size, stream: () => file.stream() };
      } catch (error) {
        if (absent(error)) return null;
        throw error;
      }
    },
    async remove(name) {
      await client.delete(key(name));
    },
    async sweep() {},
  };
}
