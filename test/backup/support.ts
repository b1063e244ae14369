import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import S3rver from "s3rver";
import type { Manifest } from "../../src/backup/manifest.ts";
import { startSimulator } from "../../src/simulator/server.ts";
import { openDatabase } from "../../src/store/sqlite/open.ts";
import { sqliteTestDeps, startApp, TEST_APP_SECRET } from "../support/harness.ts";
import { freePort, MAIN, processEnv, ROOT, runMain, waitForOk } from "../support/process.ts";
import { tempDir } from "../support/temp-dir.ts";
import { receiver, relayAccount } from "../webhooks/support.ts";

/** s3rver's own keys: it checks every request's signature with them. */
const S3_KEYS = { S3_ACCESS_KEY_ID: "S3RVER", S3_SECRET_ACCESS_KEY: "S3RVER", S3_REGION: "us-east-1" };

export interface LocalS3 {
  bucket: string;
  /** The standard variables that point the service at it. */
  env: Record<string, string>;
  /** While on, uploads of backup files (not of manifests) are refused as an S3 store refuses a PUT (403). */
  refuseUploads(on: boolean): void;
  /** The keys under the bucket, as S3 lists them. */
  keys(): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * A local S3-compatible server (s3rver, on its own directory) with one bucket, behind a pass-through
 * front on another port that can refuse uploads: the requests are forwarded as signed, Host and all.
 */
export async function startS3(bucket = "backups"): Promise<LocalS3> {
  const dir = tempDir("switchboard-s3-");
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory: dir.path,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  let refusing = false;
  const front = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (
        refusing &&
        (request.method === "PUT" || request.method === "POST") &&
        /\.(tar|db)\.zst$/.test(url.pathname)
      ) {
        const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`;
        return new Response(xml, { status: 403, headers: { "content-type": "application/xml" } });
      }
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      return fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body,
        redirect: "manual",
        decompress: false,
      } as RequestInit);
    },
  });
  const endpoint = `http://127.0.0.1:${front.port}`;
  const client = new Bun.S3Client({
    bucket,
    endpoint,
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    region: "us-east-1",
  });
  return {
    bucket,
    env: { ...S3_KEYS, S3_ENDPOINT: endpoint },
    refuseUploads(on) {
      refusing = on;
    },
    async keys() {
      return ((await client.list()).contents ?? []).map((object) => object.key).sort();
    },
    async stop() {
      front.stop(true);
      await server.close();
      dir.cleanup();
    },
  };
}

/** Makes the database file at `path` (this build's schema) about `megabytes` larger, with rows no purge deletes. */
export function padDatabase(path: string, megabytes: number): void {
  const { sqlite } = openDatabase(path);
  const insert = sqlite.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
  const rows = megabytes * 256;
  sqlite.transaction(() => {
    for (let i = 0; i < rows; i++)
      insert.run(`padding-${i}`, Buffer.from(crypto.getRandomValues(new Uint8Array(3000))).toString("base64"));
  })();
  sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  sqlite.close();
}

/** The file names in a directory, sorted; none when it does not exist. */
export function filesIn(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** What a backup's name looks like (src/backup/names.ts); a file named so must be a whole, verified backup. */
export const BACKUP_FILE = /^switchboard-\d{8}T\d{6}Z-v\d+(-\d+)?\.(tar|db)\.zst(\.json)?$/;

/** Waits, boundedly, until `ready` holds (a file appears, a delivery arrives). */
export async function until(ready: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(1);
  }
}

/**
 * `switchboard serve` in a process of its own with `env` (processEnv's), on a free port; resolves
 * once /healthz answers (within `readyMs`: a start takes long beside busy loops on every core).
 */
export async function serverProcess(env: Record<string, string>, readyMs = 15_000) {
  const port = freePort();
  const proc = Bun.spawn([process.execPath, MAIN, "serve"], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForOk(`${url}/healthz`, readyMs);
  } catch (error) {
    proc.kill("SIGKILL");
    throw error;
  }
  return { proc, url };
}

/** The backup's own process started by `parent` (src/backup/child.ts), or null while there is none. */
export function backupChildOf(parent: number): number | null {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …: the command name may hold spaces, so fields are read after its ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== parent) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes("backup-snapshot")) return Number(entry);
    } catch {
      // A process that ended meanwhile.
    }
  }
  return null;
}

/** The nice value of each thread of process `pid`. */
export function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((thread) => {
    const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, "utf8");
    // Field 19 of stat is the nice value; fields after the ")" start at field 3.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
  });
}

/** Whether process `pid` is still running (a zombie is not). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Waits, boundedly, for the backup's own process of `parent` to start; its pid. */
export async function backupChild(parent: number, ms?: number): Promise<number> {
  const found: { pid: number | null } = { pid: null };
  await until(
    () => {
      found.pid = backupChildOf(parent);
      return found.pid !== null;
    },
    "the backup's process",
    ms,
  );
  if (found.pid === null) throw new Error("no backup process");
  return found.pid;
}

/**
 * The platform's stand-in with one WABA (its token and the tests' app secret) and one number, and a
 * webhook receiver; `stop` ends both.
 */
export function upstreamWithNumber(wabaId: string, phone: string, token: string, level: "STANDARD" | "HIGH") {
  const sim = startSimulator();
  const rx = receiver();
  sim.addWaba({ wabaId, accessToken: token, appSecret: TEST_APP_SECRET });
  sim.addNumber(wabaId, { phoneNumberId: phone, throughputLevel: level });
  return {
    sim,
    rx,
    async stop() {
      await sim.stop();
      rx.stop();
    },
  };
}

/**
 * A stopped deployment with sealed secrets (a WABA's upstream token, an endpoint's signing secret),
 * `beforeBackup` run on its files, then backed up by `switchboard backup` into `dir`/backups.
 */
export async function backedUpDeployment(dir: string, beforeBackup: (dbPath: string) => void = () => {}) {
  const deployment = await sqliteTestDeps({ env: { DEV_MODE: "1" } });
  const server = startApp(deployment);
  const account = await relayAccount(server.url);
  await account.endpoint("http://127.0.0.1:9/hook");
  await server.stop();
  beforeBackup(deployment.dbPath);
  const env = processEnv(deployment.dbPath, { BACKUP_TO: join(dir, "backups") });
  const taken = await runMain(["backup"], env);
  if (taken.code !== 0) throw new Error(`switchboard backup: ${taken.stderr}`);
  const manifest = JSON.parse(taken.stdout) as Manifest;
  return { deployment, env, manifest, backupPath: join(dir, "backups", manifest.name) };
}
