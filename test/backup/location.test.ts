// Where backups go (docs/backups.md#where-backups-go): a relative BACKUP_TO beside the database,
// every listing saying where it looked, and no symbolic link ever followed.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, linkSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { onSqlite } from "../support/backend.ts";
import { admin, tempDir } from "../support/harness.ts";
import { processEnv, runMain } from "../support/process.ts";
import { BACKUP_FILE, filesIn, serverProcess } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function deployment(env: Record<string, string> = {}) {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const dbPath = join(dir.path, "switchboard.db");
  const server = await serverProcess(processEnv(dbPath, { LOG_LEVEL: "error", ...env }));
  cleanups.push(() => server.proc.kill("SIGKILL"));
  return { ...server, dbPath, dir: dir.path };
}

describe.skipIf(!onSqlite)("where backups go", () => {
  test("a relative BACKUP_TO is beside the database, not in the working directory; each listing says where it looked", async () => {
    const { url, dbPath, dir } = await deployment({ BACKUP_TO: "nightly" });
    const env = processEnv(dbPath, { BACKUP_TO: "nightly", LOG_LEVEL: "error" });
    // The CLI runs from the repository's root, the database is elsewhere.
    const taken = await runMain(["backup"], env);
    expect(taken.code).toBe(0);
    const manifest = JSON.parse(taken.stdout) as { name: string };
    expect(filesIn(join(dir, "nightly"))).toEqual([manifest.name, `${manifest.name}.json`]);
    const listed = await runMain(["admin", "backups", "list"], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      location: join(dir, "nightly"),
      data: [{ name: manifest.name }],
    });
    const api = (await (await admin(url, "GET", "/admin/backups")).json()) as { location: string; data: unknown[] };
    expect(api.location).toBe(join(dir, "nightly"));
    expect(api.data).toHaveLength(1);
  }, 60_000);

  test("a BACKUP_TO that is a symbolic link is refused by every listing and every backup, saying so", async () => {
    const real = tempDir();
    cleanups.push(real.cleanup);
    const linkParent = tempDir();
    cleanups.push(linkParent.cleanup);
    const link = join(linkParent.path, "backups");
    symlinkSync(real.path, link);
    const { url, dbPath } = await deployment({ BACKUP_TO: link });
    const said = `the backups' directory ${link} is a symbolic link, which backups never follow: name the directory it points to`;
    const listed = await admin(url, "GET", "/admin/backups");
    expect(listed.status).toBe(409);
    expect(await listed.json()).toMatchObject({ error: { code: "backup_location_refused", message: said } });
    const taken = await admin(url, "POST", "/admin/backups");
    expect(taken.status).toBe(500);
    expect(await taken.json()).toMatchObject({
      error: { code: "backup_failed", message: expect.stringContaining(said) },
    });
    const cli = await runMain(["backup"], processEnv(dbPath, { BACKUP_TO: link, LOG_LEVEL: "error" }));
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(said);
    expect(filesIn(real.path)).toEqual([]);
  }, 60_000);

  test("a link or a hard link under a backup's name to the live files is never listed nor served, and the server keeps its locks", async () => {
    const { url, dbPath, dir } = await deployment({ BACKUP_TO: "backups" });
    const to = join(dir, "backups");
    mkdirSync(to);
    const names = ["switchboard-20260101T000000Z-v1.tar.zst", "switchboard-20260101T000001Z-v1.tar.zst"];
    // A link to the server lock's file, its manifest a link to the database; a hard link to the lock.
    symlinkSync(`${dbPath}-lock`, join(to, names[0]!));
    symlinkSync(dbPath, join(to, `${names[0]}.json`));
    linkSync(`${dbPath}-lock`, join(to, names[1]!));
    linkSync(dbPath, join(to, `${names[1]}.json`));
    const listed = (await (await admin(url, "GET", "/admin/backups")).json()) as { data: unknown[] };
    expect(listed.data).toEqual([]);
    for (const name of names) {
      for (const path of [name, `${name}.json`]) {
        const response = await admin(url, "GET", `/admin/backups/${path}`);
        expect(response.status, path).toBe(404);
      }
    }
    // Its locks held: a second server on the same file is refused, and so is a restore into it.
    const second = await runMain(["serve"], processEnv(dbPath, { PORT: "0", HOST: "127.0.0.1" }));
    expect(second.code).toBe(2);
    expect(second.stderr).toContain("is in use by another switchboard server");
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // A real backup beside them is listed, and the links are left alone.
    expect((await admin(url, "POST", "/admin/backups")).status).toBe(201);
    const after = (await (await admin(url, "GET", "/admin/backups")).json()) as { data: { name: string }[] };
    expect(after.data.map((b) => b.name)).toHaveLength(1);
    expect(existsSync(join(to, names[0]!))).toBe(true);
  }, 60_000);

  test("`switchboard backup` of a SQLite file that does not exist exits 2 naming it, and creates nothing", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const missing = join(dir.path, "nowhere", "switchboard.db");
    const result = await runMain(["backup"], processEnv(missing, { BACKUP_TO: join(dir.path, "backups") }));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(`switchboard: backup: no database at ${missing} (DATABASE_URL); nothing was created`);
    expect(filesIn(dir.path)).toEqual([]);
    expect(filesIn(join(dir.path, "..")).filter((name) => BACKUP_FILE.test(name))).toEqual([]);
  });
});
