import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { SqliteStore } from "../../src/store/sqlite/store.ts";
import { onSqlite, testDatabase } from "../support/backend.ts";
import { admin } from "../support/harness.ts";
import { freePort, MAIN, processEnv, ROOT, runMain, waitForOk } from "../support/process.ts";
import { startSimulator } from "../../src/simulator/server.ts";
import { TEST_APP_SECRET, tempDir } from "../support/harness.ts";
import { bearer, startWorld, type World } from "../support/world.ts";

// Issue 30, item 1: the request log is written off the serving thread. What must hold whatever
// happens to its writer: a batch handed over before a SIGTERM is written before the process exits,
// and a writer thread that dies is reported, counted and replaced, its batches written once.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const HOUR = 3_600_000;
const SEND = "POST /{version}/{phone_number_id}/messages";
const body = JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } });

describe.skipIf(!onSqlite)("the writer thread (SQLite)", () => {
  test("dying with a batch is logged, counted in /metrics and replaced; the batch is written once, and calls go on", async () => {
    const world: World = await startWorld();
    cleanups.push(() => world.stop());
    const biz = await world.business({ throughput: "HIGH" });
    const log = world.app().requestLog!;
    const send = async () => {
      const r = await world.call(`/v21.0/${biz.phoneNumberId}/messages`, {
        method: "POST",
        headers: { ...bearer(biz.liveKey), "content-type": "application/json" },
        body,
      });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
      return r.headers.get("x-proxy-request-id")!;
    };
    const ids = [await send()];
    await log.flush();

    ids.push(await send(), await send());
    const handed = log.flush();
    (world.deps.store as SqliteStore).requests.thread.kill();
    await handed;
    ids.push(await send(), await send());
    await log.flush();

    for (const id of ids)
      expect(await world.deps.store.requests.get(biz.accountId, id)).toMatchObject({ id, status: 200 });
    const hour = Math.floor(world.deps.clock.now() / HOUR) * HOUR;
    const usage = await world.deps.store.requests.usage(biz.accountId, hour, hour + HOUR);
    expect(usage.map((u) => [u.kind, u.label, u.count])).toEqual([["forwarded", SEND, ids.length]]);
    expect(await (await world.call("/metrics")).text()).toMatch(/^switchboard_request_log_writer_restarts_total 1$/m);
    expect(await (await world.call("/metrics")).text()).toMatch(/^switchboard_request_log_dropped_total 0$/m);
    expect(world.deps.logger.lines.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([
      "the request log's writer died and was started again; calls go on",
    ]);
  });
});

test("a SIGTERM while batches are being written: every call answered before it is in the log when the process exits", async () => {
  const sim = startSimulator();
  cleanups.push(() => sim.stop());
  const database = await testDatabase();
  cleanups.push(() => database.drop());
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = processEnv(join(dir.path, "unused.db"), {
    DATABASE_URL: database.url,
    ...database.env,
    UPSTREAM_URL: sim.url,
    LOG_LEVEL: "warn",
  });
  const server = Bun.spawn([process.execPath, MAIN, "serve"], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdout: "pipe",
    stderr: "inherit",
  });
  cleanups.push(() => server.kill("SIGKILL"));
  await waitForOk(`${url}/healthz`);

  const { id: accountId } = (await (
    await admin(url, "POST", "/admin/accounts", { name: "Stopping", email: "s@example.com" })
  ).json()) as { id: string };
  const { key } = (await (
    await admin(url, "POST", `/admin/accounts/${accountId}/api-keys`, { mode: "live" })
  ).json()) as { key: string };
  sim.addWaba({ wabaId: "7001", accessToken: "EAAGstop", appSecret: TEST_APP_SECRET });
  sim.addNumber("7001", { phoneNumberId: "7002", throughputLevel: "HIGH" });
  expect(
    (await admin(url, "POST", `/admin/accounts/${accountId}/wabas`, { waba_id: "7001", access_token: "EAAGstop" }))
      .status,
  ).toBe(201);
  expect(
    (
      await admin(url, "POST", `/admin/accounts/${accountId}/numbers`, {
        phone_number_id: "7002",
        waba_id: "7001",
        kind: "embedded",
      })
    ).status,
  ).toBe(201);

  // More than a batch (500 records): one goes to the writer while calls are still being answered.
  const started = Date.now();
  const calls = 600;
  let answered = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (answered < calls) {
        answered++;
        const r = await fetch(`${url}/v21.0/7002/messages`, {
          method: "POST",
          headers: { ...bearer(key), "content-type": "application/json" },
          body,
        });
        expect(r.status).toBe(200);
        await r.arrayBuffer();
      }
    }),
  );
  server.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  expect(await new Response(server.stdout).text()).not.toContain("request log");

  // The usage counts are made from the records a batch wrote, in the same transaction.
  const from = new Date(Math.floor(started / HOUR) * HOUR).toISOString();
  const listed = await runMain(["admin", "usage", "list", "--from", from, "--account-id", accountId], env);
  expect(listed.code).toBe(0);
  const counts = (JSON.parse(listed.stdout) as { data: { label: string; count: number }[] }).data;
  expect(counts.filter((u) => u.label === SEND).reduce((sum, u) => sum + u.count, 0)).toBe(calls);
});
