import { closeSync, constants, createReadStream, fstatSync, openSync, type Stats } from "node:fs";
import { copyFile, lstat, mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { PRIVATE_FILE, syncToDisk } from "./codec.ts";
import type { BackupTarget } from "./target.ts";

/** A file being put is written under `.<name>.partial`, which no backup's name looks like, and renamed once whole. */
const partial = (name: string) => `.${name}.partial`;
const isPartial = (name: string) => name.startsWith(".") && name.endsWith(".partial");

const missing = (error: unknown) => (error as { code?: string }).code === "ENOENT";

/** A backups' directory that is a symbolic link: refused, never followed. */
export class SymlinkRefused extends Error {}

const sameFile = (a: Stats, b: Stats) => a.dev === b.dev && a.ino === b.ino;

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Backups as files of a local directory (created when the first one is put). Nothing here follows
 * a symbolic link: not the directory itself, nor a file in it. A server that opened its own live
 * database through one (a link under a backup's name) and closed it would lose its SQLite locks,
 * which the operating system keeps per process and file and drops at any close; `ownFiles` (the
 * deployment's database files) are refused by identity for the same reason, whatever their name.
 */
export function directoryTarget(directory: string, ownFiles: readonly string[] = []): BackupTarget {
  /** The directory, checked before each use: absent (null) or a real directory. */
  const checkDirectory = async (): Promise<Stats | null> => {
    let found: Stats;
    try {
      found = await lstat(directory);
    } catch (error) {
      if (missing(error)) return null;
      throw error;
    }
    if (found.isSymbolicLink()) {
      throw new SymlinkRefused(
        `the backups' directory ${directory} is a symbolic link, which backups never follow: name the directory it points to`,
      );
    }
    return found;
  };
  const isOwnFile = async (found: Stats) => {
    for (const path of ownFiles) {
      const own = await stat(path).catch(() => null);
      if (own && sameFile(own, found)) return true;
    }
    return false;
  };
  /** What `name` is when it is a regular file of the directory that is none of `ownFiles`; else null. */
  const fileStats = async (name: string): Promise<Stats | null> => {
    if ((await checkDirectory()) === null) return null;
    const found = await lstat(join(directory, name)).catch((error) => {
      if (missing(error)) return null;
      throw error;
    });
    return found?.isFile() && !(await isOwnFile(found)) ? found : null;
  };
  /** Reads `name` without following a link, and only if it is still the file `looked` describes. */
  const read = (name: string, looked: Stats) => {
    const fd = openSync(join(directory, name), constants.O_RDONLY | constants.O_NOFOLLOW);
    if (!sameFile(looked, fstatSync(fd))) {
      closeSync(fd);
      throw new Error(`${name} was replaced while it was opened`);
    }
    return createReadStream("", { fd, highWaterMark: 1 << 20 });
  };
  /** Writes the file under its partial name, syncs it, renames it, and syncs the directory. */
  const place = async (name: string, write: (path: string) => Promise<void>) => {
    await checkDirectory();
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const temporary = join(directory, partial(name));
    try {
      await write(temporary);
      await syncToDisk(temporary);
      await rename(temporary, join(directory, name));
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    await syncToDisk(directory);
  };
  const list = async () => {
    if ((await checkDirectory()) === null) return [];
    try {
      const entries = await readdir(directory, { withFileTypes: true });
      // A link's entry is not a file's: links are never listed, read or served.
      return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
    } catch (error) {
      if (missing(error)) return [];
      throw error;
    }
  };
  return {
    where: directory,
    list,
    // The copy keeps the local file's mode (PRIVATE_FILE); never over something already there.
    put: (name, localPath) => place(name, (path) => copyFile(localPath, path, constants.COPYFILE_EXCL)),
    putText: (name, text) => place(name, (path) => writeFile(path, text, { mode: PRIVATE_FILE, flag: "wx" })),
    async readText(name) {
      const looked = await fileStats(name);
      return looked === null ? null : await text(read(name, looked));
    },
    async open(name) {
      const looked = await fileStats(name);
      if (looked === null) return null;
      return {
        size: looked.size,
        stream: () => Readable.toWeb(read(name, looked)) as unknown as ReadableStream<Uint8Array>,
      };
    },
    async remove(name) {
      await checkDirectory();
      await rm(join(directory, name), { force: true });
    },
    async sweep() {
      for (const name of await list()) if (isPartial(name)) await rm(join(directory, name), { force: true });
    },
  };
}
