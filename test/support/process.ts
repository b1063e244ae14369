import { join } from "node:path";
import { createSealer } from "../../src/crypto/sealer.ts";
import { cryptoRandom } from "../../src/runtime/random.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { TEST_ADMIN_TOKEN, TEST_APP_SECRET, TEST_ENCRYPTION_KEY } from "./harness.ts";

export const ROOT = join(import.meta.dir, "..", "..");
export const MAIN = join(ROOT, "src", "main.ts");

/** The environment a test process gets: only what we name, plus PATH/HOME so Bun can run. */
export function processEnv(dbPath: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    APP_SECRET: TEST_APP_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    DATABASE_URL: `file:${dbPath}`,
    UPSTREAM_URL: "http://127.0.0.1:9",
    ...extra,
  };
}

/** Runs `switchboard <args>` from source with the current Bun and waits for it. */
export async function runMain(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], { env, cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** Polls `url` until it answers 200 (a started process is ready), or fails after `ms`. */
export async function waitForOk(url: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${ms} ms`);
    await Bun.sleep(50);
  }
}

/** A free TCP port on loopback, for child processes that must be told their port up front. */
export function freePort(): number {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = server.port!;
  server.stop(true);
  return port;
}

/**
 * Makes the SQLite file at `path`, migrated and empty, as a first `switchboard serve` does: the
 * other commands refuse a file that is not there (docs/operations.md#command-line).
 */
export async function makeDatabase(path: string): Promise<void> {
  const key = new Uint8Array(Buffer.from(TEST_ENCRYPTION_KEY, "base64"));
  await openSqliteStore(path, createSealer(key, cryptoRandom)).close();
}

/** Runs `switchboard <args>` on a pseudo-terminal (util-linux's script), as an operator's shell does; its output, both streams. */
export async function runOnTerminal(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  const command = [process.execPath, MAIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const proc = Bun.spawn(["script", "-qefc", command, "/dev/null"], { env, cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [output, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, output: output.replaceAll("\r\n", "\n") };
}
