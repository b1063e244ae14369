import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { onSqlite } from "../support/backend.ts";
import { admin, sqliteTestDeps, startApp, tempDir } from "../support/harness.ts";
import { processEnv, runMain } from "../support/process.ts";
import { relayAccount } from "../webhooks/support.ts";
import { startS3 } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Manifest = { name: string; at: string; bytes: number; sha256: string; counts: Record<string, number> };

describe.skipIf(!onSqlite)("backups to an S3-compatible store (a local s3rver)", () => {
  test("switchboard backup uploads, keeps the newest BACKUP_KEEP, lists them; restore brings one back from S3", async () => {
    const s3 = await startS3();
    cleanups.push(() => s3.stop());
    const deployment = await sqliteTestDeps();
    cleanups.push(deployment.cleanup);
    const server = startApp(deployment);
    cleanups.push(server.stop);
    await relayAccount(server.url);
    const env = processEnv(deployment.dbPath, { ...s3.env, BACKUP_TO: `s3://${s3.bucket}/eu/prod`, BACKUP_KEEP: "2" });

    const taken: Manifest[] = [];
    for (let run = 0; run < 3; run++) {
      const result = await runMain(["backup"], env);
      expect(result.stderr).not.toContain("failed");
      expect(result.code).toBe(0);
      taken.push(JSON.parse(result.stdout));
    }
    const kept = taken.slice(1).reverse();
    expect(await s3.keys()).toEqual(kept.flatMap((m) => [`eu/prod/${m.name}`, `eu/prod/${m.name}.json`]).sort());
    const listed = await runMain(["admin", "backups", "list"], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ location: `s3://${s3.bucket}/eu/prod`, data: kept });

    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const target = join(dir.path, "restored.db");
    const restored = await runMain(
      ["restore", "--from", `s3://${s3.bucket}/eu/prod/${kept[0]!.name}`, "--to", `file:${target}`],
      env,
    );
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    expect(restored.stdout).toStartWith(`restored ${kept[0]!.name} `);
    const db = new Database(target, { readonly: true });
    expect(db.query("SELECT COUNT(*) AS n FROM accounts").get()).toEqual({ n: 1 });
    expect(db.query("SELECT COUNT(*) AS n FROM wabas").get()).toEqual({ n: 1 });
    db.close();

    const missing = await runMain(
      ["restore", "--from", `s3://${s3.bucket}/eu/prod/${taken[0]!.name}`, "--to", `file:${join(dir.path, "gone.db")}`],
      env,
    );
    expect(missing.code).toBe(2);
    // Pruned: the backup itself is gone, and that is what is said.
    expect(missing.stderr).toContain(`no backup at s3://${s3.bucket}/eu/prod/${taken[0]!.name}`);
  });

  test("the server's backups to S3: POST stores one, GET streams it back from the bucket", async () => {
    const s3 = await startS3();
    cleanups.push(() => s3.stop());
    const deps = await sqliteTestDeps({ env: { ...s3.env, BACKUP_TO: `s3://${s3.bucket}` } });
    cleanups.push(deps.cleanup);
    const server = startApp(deps);
    cleanups.push(server.stop);
    const created = await admin(server.url, "POST", "/admin/backups");
    expect(created.status).toBe(201);
    const manifest = (await created.json()) as Manifest;
    expect(await s3.keys()).toEqual([manifest.name, `${manifest.name}.json`]);
    const file = await admin(server.url, "GET", `/admin/backups/${manifest.name}`);
    expect(file.status).toBe(200);
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(new Bun.CryptoHasher("sha256").update(bytes).digest("hex")).toBe(manifest.sha256);
    expect((await admin(server.url, "GET", "/admin/backups/switchboard-20260101T000000Z-v1.db.zst")).status).toBe(404);
  });
});
