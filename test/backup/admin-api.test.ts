import { afterEach, describe, expect, test } from "bun:test";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { onSqlite } from "../support/backend.ts";
import { filesIn } from "./support.ts";
import { admin, sqliteTestDeps, startApp, tempDir, TEST_ADMIN_TOKEN, testDeps } from "../support/harness.ts";
import { processEnv, runMain } from "../support/process.ts";
import { rawRequest } from "../support/raw-http.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function withBackups() {
  const dir = tempDir();
  const to = join(dir.path, "backups");
  const deps = await sqliteTestDeps({ env: { BACKUP_TO: to } });
  const server = startApp(deps);
  cleanups.push(dir.cleanup, deps.cleanup, server.stop);
  return { url: server.url, to, dir: dir.path };
}

describe.skipIf(!onSqlite)("GET/POST /admin/backups (docs/backups.md)", () => {
  test("a backup is listed with its manifest and downloads as the file the manifest describes; its manifest as <name>.json", async () => {
    const { url, to } = await withBackups();
    expect(await (await admin(url, "GET", "/admin/backups")).json()).toEqual({
      location: to,
      data: [],
      last_failure: null,
    });
    const created = await admin(url, "POST", "/admin/backups");
    expect(created.status).toBe(201);
    const manifest = (await created.json()) as {
      name: string;
      bytes: number;
      sha256: string;
      counts: Record<string, number>;
    };
    expect(manifest.counts).toMatchObject({ accounts: 0, events: 0, deliveries: 0 });
    expect(await (await admin(url, "GET", "/admin/backups")).json()).toEqual({
      location: to,
      data: [manifest],
      last_failure: null,
    });
    // For the owner's eyes only: the directory, the backup and its manifest.
    expect([
      statSync(to).mode & 0o777,
      statSync(join(to, manifest.name)).mode & 0o777,
      statSync(join(to, `${manifest.name}.json`)).mode & 0o777,
    ]).toEqual([0o700, 0o600, 0o600]);

    const file = await admin(url, "GET", `/admin/backups/${manifest.name}`);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-disposition")).toBe(`attachment; filename="${manifest.name}"`);
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(bytes.length).toBe(manifest.bytes);
    expect(new Bun.CryptoHasher("sha256").update(bytes).digest("hex")).toBe(manifest.sha256);
    expect(await (await admin(url, "GET", `/admin/backups/${manifest.name}.json`)).json()).toEqual(manifest);
  });

  test("?wait=false answers 202 with the name at once; its manifest answers 202 while it runs, then 200", async () => {
    const { url, to } = await withBackups();
    const started = await admin(url, "POST", "/admin/backups?wait=false");
    expect(started.status).toBe(202);
    const body = (await started.json()) as { name: string; status: string; manifest: string };
    expect(body).toEqual({
      name: expect.stringMatching(/^switchboard-\d{8}T\d{6}Z-v\d+\.tar\.zst$/),
      status: "running",
      manifest: `/admin/backups/${body.name}.json`,
    });
    expect(started.headers.get("location")).toBe(body.manifest);
    // While it runs: another is refused, and its manifest says it runs.
    const again = await admin(url, "POST", "/admin/backups?wait=false");
    const polled: number[] = [];
    const steps: string[] = [];
    let answer: Response;
    for (;;) {
      answer = await admin(url, "GET", body.manifest);
      polled.push(answer.status);
      if (answer.status !== 202) break;
      const running = (await answer.json()) as { name: string; status: string; step: string; at: string };
      expect(running).toEqual({ name: body.name, status: "running", step: expect.any(String), at: expect.any(String) });
      steps.push(running.step);
      expect(answer.headers.get("retry-after")).toBe("2");
      await Bun.sleep(10);
    }
    expect(again.status).toBe(409);
    expect(answer.status).toBe(200);
    // The steps it was seen at, in the order it goes through them.
    const order = ["snapshot", "verify", "compress", "upload"];
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.map((step) => order.indexOf(step))).toEqual(
      steps.map((step) => order.indexOf(step)).sort((a, b) => a - b),
    );
    expect(steps.every((step) => order.includes(step))).toBe(true);
    const manifest = (await answer.json()) as { name: string; mac: string };
    expect(manifest).toMatchObject({ name: body.name, mac: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(filesIn(to)).toEqual([body.name, `${body.name}.json`]);
    // A value of wait that is not true or false is refused before anything starts.
    const bad = await admin(url, "POST", "/admin/backups?wait=later");
    expect(bad.status).toBe(400);
    expect(filesIn(to)).toHaveLength(2);
  }, 60_000);

  test("every backup route needs the admin token; unknown names are 404", async () => {
    const { url } = await withBackups();
    for (const [method, path] of [
      ["GET", "/admin/backups"],
      ["POST", "/admin/backups"],
      ["GET", "/admin/backups/switchboard-20260101T000000Z-v1.db.zst"],
    ] as const) {
      for (const authorization of [undefined, "Bearer wrong", TEST_ADMIN_TOKEN]) {
        const response = await fetch(`${url}${path}`, { method, headers: authorization ? { authorization } : {} });
        expect(response.status).toBe(401);
        expect(await response.json()).toMatchObject({ error: { code: "unauthorized" } });
      }
    }
    const unknown = await admin(url, "GET", "/admin/backups/switchboard-20260101T000000Z-v1.db.zst");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: "not_found", message: "No backup of that name." } });
  });

  test("a name that is not a backup's never reaches outside the backups' directory: ../, encoded, absolute, NUL", async () => {
    const { url, to, dir } = await withBackups();
    expect((await admin(url, "POST", "/admin/backups")).status).toBe(201);
    // Files a path could reach: beside the directory, and in it under a name that is not a backup's.
    writeFileSync(join(dir, "secret.txt"), "outside");
    writeFileSync(join(to, "notes.txt"), "inside, not a backup");
    const names = [
      "..%2Fsecret.txt",
      "%2e%2e%2fsecret.txt",
      "..%5Csecret.txt",
      "notes.txt",
      "%2Fetc%2Fpasswd",
      "..%2F..%2F..%2F..%2Fetc%2Fpasswd",
      "switchboard-20260101T000000Z-v1.db.zst%00",
      "%00..%2Fsecret.txt",
      ".",
      "..",
      "%2e%2e",
    ];
    for (const name of names) {
      const response = await rawRequest(
        url,
        `GET /admin/backups/${name} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\nConnection: close`,
      );
      expect(response.status, name).toBeGreaterThanOrEqual(400);
      expect(response.status, name).toBeLessThan(500);
      expect(response.body, name).not.toContain("outside");
      expect(response.body, name).not.toContain("inside");
      expect(response.body, name).not.toContain("root:");
    }
    // A path with dots in it, as a client would send it without normalising.
    const dotted = await rawRequest(
      url,
      `GET /admin/backups/../../etc/passwd HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\nConnection: close`,
    );
    expect(dotted.status).toBeGreaterThanOrEqual(400);
    expect(dotted.status).toBeLessThan(500);
    expect(dotted.body).not.toContain("root:");
  });
});

describe("the PostgreSQL mode", () => {
  test("`switchboard backup` exits 2 with one line pointing to PostgreSQL's own tools", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const env = processEnv(join(dir.path, "unused.db"), {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      REDIS_URL: "redis://127.0.0.1:1",
    });
    const result = await runMain(["backup"], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("pg_dump");
    expect(lines[0]).toContain("point-in-time recovery");
  });

  test.skipIf(onSqlite)("the operator API's backups answer 409 backup_unsupported, saying how instead", async () => {
    const deps = await testDeps();
    const server = startApp(deps);
    cleanups.push(deps.cleanup, server.stop);
    for (const [method, path] of [
      ["GET", "/admin/backups"],
      ["POST", "/admin/backups"],
    ] as const) {
      const response = await admin(server.url, method, path);
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({
        error: { code: "backup_unsupported", message: expect.stringContaining("pg_dump") },
      });
    }
  });

  test("BACKUP_SCHEDULE with a postgres:// DATABASE_URL stops the start, naming the variable", async () => {
    const result = await runMain(
      ["serve"],
      processEnv("/nonexistent/x.db", {
        DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
        REDIS_URL: "redis://127.0.0.1:1",
        BACKUP_SCHEDULE: "0 3 * * *",
      }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toStartWith(
      "switchboard: configuration error: BACKUP_SCHEDULE: backs up the SQLite file",
    );
  });
});
