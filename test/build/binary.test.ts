import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { SCALAR_BUNDLE_PATH } from "../../src/http/api-docs.ts";
import { startSimulator } from "../../src/simulator/server.ts";
import { admin, TEST_APP_SECRET, tempDir } from "../support/harness.ts";
import { freePort, processEnv, ROOT, waitForOk } from "../support/process.ts";

const dir = tempDir();
const sim = startSimulator();
afterAll(async () => {
  await sim.stop();
  dir.cleanup();
});

describe("the single executable", () => {
  test("`bun run build` writes dist/switchboard, which migrates a new database and serves /healthz", async () => {
    const build = Bun.spawnSync([process.execPath, "run", "build"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    expect(build.exitCode).toBe(0);
    const binary = join(ROOT, "dist", "switchboard");
    expect(existsSync(binary)).toBe(true);
    expect(statSync(binary).mode & 0o111).not.toBe(0);

    // Run it from an empty directory: migrations and everything else must be inside the binary.
    const port = freePort();
    const dbPath = join(dir.path, "db.sqlite");
    const url = `http://127.0.0.1:${port}`;
    const proc = Bun.spawn([binary, "serve"], {
      cwd: dir.path,
      env: processEnv(dbPath, { PORT: String(port), HOST: "127.0.0.1", UPSTREAM_URL: sim.url }),
      stdout: "pipe",
      stderr: "pipe",
    });
    let accountId = "";
    try {
      await waitForOk(`${url}/healthz`);
      const created = await admin(url, "POST", "/admin/accounts", { name: "Binary", email: "b@example.com" });
      expect(created.status).toBe(201);
      accountId = ((await created.json()) as { id: string }).id;
      // A proxied call, for the request log: its writer thread's entry is inside the binary too.
      const { key } = (await (
        await admin(url, "POST", `/admin/accounts/${accountId}/api-keys`, { mode: "live" })
      ).json()) as { key: string };
      sim.addWaba({ wabaId: "8001", accessToken: "EAAGbinary", appSecret: TEST_APP_SECRET });
      sim.addNumber("8001", { phoneNumberId: "8002", throughputLevel: "STANDARD" });
      expect(
        (
          await admin(url, "POST", `/admin/accounts/${accountId}/wabas`, {
            waba_id: "8001",
            access_token: "EAAGbinary",
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await admin(url, "POST", `/admin/accounts/${accountId}/numbers`, {
            phone_number_id: "8002",
            waba_id: "8001",
            kind: "embedded",
          })
        ).status,
      ).toBe(201);
      const sent = await fetch(`${url}/v21.0/8002/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
      });
      expect(sent.status).toBe(200);
      // The API reference's page and Scalar's bundle are inside the binary too.
      const docs = await fetch(`http://127.0.0.1:${port}/docs`);
      expect(docs.status).toBe(200);
      expect(await docs.text()).toContain(SCALAR_BUNDLE_PATH);
      const bundle = await fetch(`http://127.0.0.1:${port}${SCALAR_BUNDLE_PATH}`);
      expect(bundle.status).toBe(200);
      expect((await bundle.bytes()).length).toBe(
        Bun.file(join(ROOT, "node_modules/@scalar/api-reference/dist/browser/standalone.js")).size,
      );
      // The binary runs itself as the backup's own process, whose thread's entry is inside it too
      // (package.json "build"); the backup holds the request log with the call just made.
      const backup = await fetch(`http://127.0.0.1:${port}/admin/backups`, {
        method: "POST",
        headers: { authorization: `Bearer ${processEnv(dbPath).ADMIN_TOKEN}` },
      });
      expect(backup.status).toBe(201);
      expect(await backup.json()).toMatchObject({ counts: { accounts: 1, request_log: 1 } });
    } finally {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
    // The WAL checkpoint thread's and the request log writer's entries are inside the binary too (package.json "build").
    const logged = await new Response(proc.stdout).text();
    expect(logged).not.toContain("background WAL checkpoints failed");
    expect(logged).not.toContain("request log");

    // The call was written to the log's own file at the stop; the binary's CLI reads its usage.
    const usage = Bun.spawnSync(
      [
        binary,
        "admin",
        "usage",
        "list",
        "--from",
        new Date(Date.now() - 3_600_000).toISOString(),
        "--account-id",
        accountId,
      ],
      {
        cwd: dir.path,
        env: processEnv(dbPath),
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    expect(usage.exitCode).toBe(0);
    expect(JSON.parse(usage.stdout.toString()).data).toMatchObject([
      { kind: "forwarded", label: "POST /{version}/{phone_number_id}/messages", count: 1 },
    ]);
    expect(existsSync(join(dir.path, "db-requests.sqlite"))).toBe(true);

    // The admin CLI of the binary reads the same database.
    const cli = Bun.spawnSync([binary, "admin", "numbers", "get", "1"], {
      cwd: dir.path,
      env: processEnv(dbPath),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(cli.exitCode).toBe(1);
    expect(JSON.parse(cli.stderr.toString()).error.code).toBe("not_found");
  }, 120_000);
});
