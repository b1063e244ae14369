import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { SCALAR_BUNDLE_PATH } from "../../src/http/api-docs.ts";
import { tempDir } from "../support/harness.ts";
import { freePort, processEnv, ROOT, waitForOk } from "../support/process.ts";

const dir = tempDir();
afterAll(dir.cleanup);

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
    const proc = Bun.spawn([binary, "serve"], {
      cwd: dir.path,
      env: processEnv(dbPath, { PORT: String(port), HOST: "127.0.0.1" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      await waitForOk(`http://127.0.0.1:${port}/healthz`);
      const created = await fetch(`http://127.0.0.1:${port}/admin/accounts`, {
        method: "POST",
        headers: { authorization: `Bearer ${processEnv(dbPath).ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Binary", email: "b@example.com" }),
      });
      expect(created.status).toBe(201);
      // The API reference's page and Scalar's bundle are inside the binary too.
      const docs = await fetch(`http://127.0.0.1:${port}/docs`);
      expect(docs.status).toBe(200);
      expect(await docs.text()).toContain(SCALAR_BUNDLE_PATH);
      const bundle = await fetch(`http://127.0.0.1:${port}${SCALAR_BUNDLE_PATH}`);
      expect(bundle.status).toBe(200);
      expect((await bundle.bytes()).length).toBe(
        Bun.file(join(ROOT, "node_modules/@scalar/api-reference/dist/browser/standalone.js")).size,
      );
    } finally {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
    // The WAL checkpoint thread's entry is inside the binary too (package.json "build").
    expect(await new Response(proc.stdout).text()).not.toContain("background WAL checkpoints failed");

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
