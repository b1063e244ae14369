/** A stored file's bytes, and how many there are. */
export interface StoredFile {
  size: number;
  stream(): ReadableStream<Uint8Array>;
}

/** Where backups and their manifests are kept: a directory, or a bucket and prefix of S3. */
export interface BackupTarget {
  /** The place, for messages: a directory or s3://bucket/prefix. */
  readonly where: string;
  /** The names of the files kept there, backups, manifests and anything else. */
  list(): Promise<string[]>;
  /** Stores the local file under `name` all at once: it is never there under that name in part. */
  put(name: string, localPath: string): Promise<void>;
  putText(name: string, text: string): Promise<void>;
  /** The text of `name`, or null when there is none. */
  readText(name: string): Promise<string | null>;
  /** `name`'s bytes, or null when there is none. */
  open(name: string): Promise<StoredFile | null>;
  /** Removes `name`; one that is not there is not an error. */
  remove(name: string): Promise<void>;
  /** Removes what an interrupted put left behind (never under a backup's name). */
  sweep(): Promise<void>;
}
