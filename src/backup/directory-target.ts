import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PRIVATE_FILE, syncToDisk } from "./codec.ts";
import type { BackupTarget } from "./target.ts";

/** A file being put is written under `.<name>.partial`, which no backup's name looks like, and renamed once whole. */
const partial = (name: string) => `.${name}.partial`;
const isPartial = (name: string) => name.startsWith(".") && name.endsWith(".partial");

const missing = (error: unknown) => (error as { code?: string }).code === "ENOENT";

/** Backups as files of a local directory (created when the first one is put). */
export function directoryTarget(directory: string): BackupTarget {
  /** Writes the file under its partial name, syncs it, renames it, and syncs the directory. */
  const place = async (name: string, write: (path: string) => Promise<void>) => {
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const temporary = join(directory, partial(name));
    try {
      await write(temporary);
      syncToDisk(temporary);
      await rename(temporary, join(directory, name));
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    syncToDisk(directory);
  };
  return {
    where: directory,
    async list() {
      try {
        const entries = await readdir(directory, { withFileTypes: true });
        return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
      } catch (error) {
        if (missing(error)) return [];
        throw error;
      }
    },
    // The copy keeps the local file's mode (PRIVATE_FILE).
    put: (name, localPath) => place(name, (path) => copyFile(localPath, path)),
    putText: (name, text) => place(name, (path) => writeFile(path, text, { mode: PRIVATE_FILE })),
    async readText(name) {
      try {
        return await readFile(join(directory, name), "utf8");
      } catch (error) {
        if (missing(error)) return null;
        throw error;
      }
    },
    async open(name) {
      const file = Bun.file(join(directory, name));
      return (await file.exists()) ? { size: file.size, stream: () => file.stream() } : null;
    },
    remove: (name) => rm(join(directory, name), { force: true }),
    async sweep() {
      for (const name of await this.list()) if (isPartial(name)) await rm(join(directory, name), { force: true });
    },
  };
}
