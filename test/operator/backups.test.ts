// The console's Backups page and the overview's last backup (docs/backups.md): read from wherever
// BACKUP_TO points, so the backups the CLI took count; "Take a backup"; downloads recorded.
import { afterEach, describe, expect, test } from "bun:test";
import { testBackend } from "../support/backend.ts";
import { tempDir } from "../support/harness.ts";
import { processEnv, runMain } from "../support/process.ts";
import { allEntries } from "../audit/support.ts";
import { consoleWorld, type ConsoleWorld } from "./support.ts";

const HOUR = 3_600_000;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function world(env: Record<string, string> = {}): Promise<ConsoleWorld> {
  const w = await consoleWorld(env);
  cleanups.push(() => w.close());
  return w;
}

const text = (response: Response) => response.text();

describe.skipIf(testBackend() === "postgres")("the console's backups (SQLite)", () => {
  test("backups the CLI took are the overview's last one and the Backups page's list, with where they are", async () => {
    const backups = tempDir();
    cleanups.push(backups.cleanup);
    const w = await world({ BACKUP_TO: backups.path });
    const first = await w.operator();
    const empty = await text(await w.get(first.cookie, "/operator/backups"));
    expect(empty).toContain("No backup there yet.");
    expect(empty).toContain(backups.path);

    // Two backups by the command line beside the server: this server took none of them.
    const env = processEnv(w.deps.databaseUrl.slice("file:".length), { BACKUP_TO: backups.path, LOG_LEVEL: "error" });
    const names: string[] = [];
    let at = "";
    for (let i = 0; i < 2; i++) {
      const taken = await runMain(["backup"], env);
      expect(taken.code).toBe(0);
      const manifest = JSON.parse(taken.stdout) as { name: string; at: string };
      names.unshift(manifest.name);
      at = manifest.at;
    }
    // Two hours later by the server's clock (signed in again: the clock moved months).
    w.deps.clock.set(Date.parse(at) + 2 * HOUR);
    const { cookie } = await w.operator();
    const overview = await text(await w.get(cookie, "/operator"));
    expect(overview).not.toContain("None yet");
    expect(overview).toContain('<span class="stat-label">Last backup</span><span class="stat-value">2 h ago</span>');
    expect(overview).toContain(`at ${backups.path}`);

    const page = await text(await w.get(cookie, "/operator/backups"));
    expect(page).toContain(`At ${backups.path}`);
    expect(page).toContain('<span class="stat-label">Last good backup</span><span class="stat-value">2 h ago</span>');
    // Newest first, each with its download (the operator API's, with the console's session).
    expect(page.indexOf(names[0]!)).toBeLessThan(page.indexOf(names[1]!));
    for (const name of names) expect(page).toContain(`href="/admin/backups/${name}"`);
    const download = await w.get(cookie, `/admin/backups/${names[0]}`);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toBe(`attachment; filename="${names[0]}"`);
    await download.arrayBuffer();
    const [entry] = await allEntries(w.url, { action: "backup.download" });
    expect(entry).toMatchObject({ actor: { kind: "operator" }, object: { kind: "backup", id: names[0] } });
  }, 60_000);

  test("Take a backup: it starts in the background, the page says so, and it is listed and recorded as the operator's", async () => {
    const backups = tempDir();
    cleanups.push(backups.cleanup);
    const w = await world({ BACKUP_TO: backups.path });
    const operator = await w.operator();
    const posted = await w.post(operator.cookie, "/operator/backups");
    expect(posted.status).toBe(303);
    const location = posted.headers.get("location")!;
    const name = decodeURIComponent(/started=([^&]+)/.exec(location)![1]!);
    expect(name).toMatch(/^switchboard-\d{8}T\d{6}Z-v\d+\.tar\.zst$/);
    expect(await text(await w.get(operator.cookie, location))).toContain(
      `A backup is being taken: <code>${name}</code>`,
    );
    let entries = await allEntries(w.url, { action: "backup.create" });
    for (let i = 0; entries.length === 0 && i < 3000; i++) {
      await Bun.sleep(20);
      entries = await allEntries(w.url, { action: "backup.create" });
    }
    expect(entries).toEqual([
      expect.objectContaining({ actor: expect.objectContaining({ kind: "operator", id: operator.id }) }),
    ]);
    expect(await text(await w.get(operator.cookie, "/operator/backups"))).toContain(`href="/admin/backups/${name}"`);
    // A form post from another site is refused, and starts nothing.
    const forged = await fetch(`${w.url}/operator/backups`, {
      method: "POST",
      headers: {
        cookie: operator.cookie,
        origin: "https://evil.example",
        "content-type": "application/x-www-form-urlencoded",
      },
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    expect(await allEntries(w.url, { action: "backup.create" })).toHaveLength(1);
  }, 60_000);
});

describe.skipIf(testBackend() !== "postgres")("the console's backups (PostgreSQL)", () => {
  test("the Backups page says PostgreSQL's own tools back it up; Take a backup is refused", async () => {
    const w = await world();
    const { cookie } = await w.operator();
    expect(await text(await w.get(cookie, "/operator/backups"))).toContain("back it up with its own tools");
    expect((await w.post(cookie, "/operator/backups")).status).toBe(409);
  });
});
