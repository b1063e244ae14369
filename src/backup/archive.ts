import { closeSync, createReadStream, fsyncSync, openSync, statSync, writeSync } from "node:fs";
import { Writable } from "node:stream";
import { PRIVATE_FILE } from "./codec.ts";

/**
 * A backup holds two SQLite files, the database and the request log's, as one tar archive (POSIX
 * ustar, what `tar` reads: `zstd -d < NAME | tar -x` opens one by hand). Its entries have fixed
 * names, in this order, and nothing else is ever read from or written for an archive.
 */
export const ENTRIES = ["switchboard.db", "switchboard-requests.db"] as const;
export type EntryName = (typeof ENTRIES)[number];

const BLOCK = 512;
const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

/** The archive's size for files of these sizes: a header and padded data each, then two empty blocks. */
export const archiveSize = (sizes: readonly number[]): number =>
  sizes.reduce((total, size) => total + BLOCK + size + padding(size), 2 * BLOCK);

/** A number field of a header: octal, or past what its digits hold, base-256 (GNU tar's, which every tar reads). */
function writeNumber(header: Buffer, offset: number, length: number, value: number): void {
  const octal = value.toString(8);
  if (octal.length < length) {
    header.write(`${octal.padStart(length - 1, "0")}\0`, offset, length, "ascii");
    return;
  }
  header[offset] = 0x80;
  let rest = BigInt(value);
  for (let i = offset + length - 1; i > offset; i--) {
    header[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
}

function readNumber(header: Buffer, offset: number, length: number): number {
  if (header.readUInt8(offset) & 0x80) {
    let value = 0n;
    for (let i = offset + 1; i < offset + length; i++) value = (value << 8n) | BigInt(header.readUInt8(i));
    return Number(value);
  }
  const text = header.toString("ascii", offset, offset + length).replace(/[\0 ]+$/, "");
  if (!/^[0-7]*$/.test(text)) return Number.NaN;
  return text === "" ? 0 : Number.parseInt(text, 8);
}

const checksum = (header: Buffer) => {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header.readUInt8(i);
  return sum;
};

/** A regular file's header: its name, size and time (seconds), owner-only mode. */
function header(name: string, size: number, mtime: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, "ascii");
  writeNumber(block, 100, 8, PRIVATE_FILE);
  writeNumber(block, 108, 8, 0);
  writeNumber(block, 116, 8, 0);
  writeNumber(block, 124, 12, size);
  writeNumber(block, 136, 12, mtime);
  block.write("0", 156, 1, "ascii");
  block.write("ustar\u000000", 257, 8, "ascii");
  block.write(`${checksum(block).toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return block;
}

/** The archive of `files` (the entries' local paths, in ENTRIES's order), as a stream of its bytes. */
export async function* archiveOf(files: readonly string[], mtime: number): AsyncGenerator<Buffer> {
  for (const [i, name] of ENTRIES.entries()) {
    const path = files[i];
    if (path === undefined) throw new Error(`no file given for ${name}`);
    const size = statSync(path).size;
    yield header(name, size, mtime);
    let read = 0;
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
      read += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
    // A file that changed size while it was read would make the archive lie about it.
    if (read !== size) throw new Error(`${path} changed while it was archived (${read} bytes read, ${size} stated)`);
    yield Buffer.alloc(padding(size));
  }
  yield Buffer.alloc(2 * BLOCK);
}

/** An archive that is not one of ours: the message says what is wrong with it. */
export class ArchiveError extends Error {}

/** The size of the entry a header announces where `expected` belongs, or what is wrong with the header. */
function entrySize(block: Buffer, expected: EntryName): number | string {
  if (readNumber(block, 148, 8) !== checksum(block)) return "has a damaged header";
  const name = block.toString("ascii", 0, 100).replace(/\0.*$/s, "");
  const type = block.toString("ascii", 156, 157);
  if (name !== expected || (type !== "0" && type !== "\0")) return `holds "${name}" where ${expected} belongs`;
  const size = readNumber(block, 124, 12);
  if (!Number.isSafeInteger(size) || size < 0) return `states no valid size for ${name}`;
  return size;
}

/**
 * Writes an archive's entries, as its bytes arrive, to new files (`paths`, by entry name); anything
 * but ENTRIES in order, each a regular file, then the end blocks and nothing after, fails the stream
 * with ArchiveError. Each file is synced before the stream finishes.
 */
export function unpacker(paths: Record<EntryName, string>): Writable {
  let pending: Buffer = Buffer.alloc(0);
  let entry = 0;
  /** The file being written, and how many of its bytes (then of its padding) are still to come. */
  let file: { fd: number; left: number; pad: number } | null = null;
  let ended = false;
  const fail = (message: string) => new ArchiveError(`the backup's archive ${message}`);

  const takeHeader = (block: Buffer): ArchiveError | null => {
    if (block.every((byte) => byte === 0)) {
      if (entry < ENTRIES.length) return fail(`ends after ${entry} of its ${ENTRIES.length} files`);
      ended = true;
      return null;
    }
    const expected = ENTRIES[entry];
    if (ended || expected === undefined) return fail("holds more than its files");
    const size = entrySize(block, expected);
    if (typeof size === "string") return fail(size);
    file = { fd: openSync(paths[expected], "wx", PRIVATE_FILE), left: size, pad: padding(size) };
    entry++;
    return null;
  };

  const finishFile = () => {
    if (file === null) return;
    fsyncSync(file.fd);
    closeSync(file.fd);
    file = null;
  };

  /** Writes what has arrived of the file, then skips its padding; false when more bytes must come first. */
  const feedFile = (current: { fd: number; left: number; pad: number }): boolean => {
    if (current.left > 0) {
      if (pending.length === 0) return false;
      const part = pending.subarray(0, Math.min(current.left, pending.length));
      writeSync(current.fd, part);
      current.left -= part.length;
      pending = pending.subarray(part.length);
      return true;
    }
    const skip = Math.min(current.pad, pending.length);
    current.pad -= skip;
    pending = pending.subarray(skip);
    if (current.pad > 0) return false;
    finishFile();
    return true;
  };

  const consume = (): ArchiveError | null => {
    for (;;) {
      if (file !== null) {
        if (!feedFile(file)) return null;
        continue;
      }
      if (pending.length < BLOCK) return null;
      const block = pending.subarray(0, BLOCK);
      pending = pending.subarray(BLOCK);
      const error = takeHeader(block);
      if (error) return error;
    }
  };

  const closeAll = () => {
    if (file !== null) closeSync(file.fd);
    file = null;
  };
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      try {
        done(consume());
      } catch (error) {
        done(error as Error);
      }
    },
    final(done) {
      if (!ended || file !== null || pending.length > 0) return done(fail("is cut short"));
      done();
    },
    destroy(error, done) {
      closeAll();
      done(error);
    },
  });
}
