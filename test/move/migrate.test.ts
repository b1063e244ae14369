import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { Webhook } from "standardwebhooks";
import { ManualClock } from "../../src/runtime/clock.ts";
import { startSimulator } from "../../src/simulator/server.ts";
import { takeServerLock } from "../../src/store/sqlite/server-lock.ts";
import { postgresAdmin, postgresUrl } from "../support/backend.ts";
import { admin, sqliteTestDeps, startApp, TEST_APP_SECRET } from "../support/harness.ts";
import { freePort, MAIN, processEnv, ROOT, runMain, waitForOk } from "../support/process.ts";
import { eventBody, messageChange, postUpstream, receiver, relayAccount } from "../webhooks/support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A database with nothing in it, not even the schema: the move creates it. */
async function bareDatabase(): Promise<string> {
  const name = `sb_move_${process.pid}_${Date.now().toString(36)}`;
  await postgresAdmin().unsafe(`CREATE DATABASE ${name}`);
  cleanups.push(() => postgresAdmin().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  return postgresUrl(name);
}

/** Waits, boundedly, until `ready` holds. */
async function until(ready: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

test("switchboard migrate moves a SQLite deployment into an empty PostgreSQL database, which then proxies, delivers and replays as before; a second move, or one beside a running server, is refused", async () => {
  const sim = startSimulator();
  const rx = receiver();
  cleanups.push(
    () => sim.stop(),
    () => rx.stop(),
  );

  // A deployment on SQLite: a key, a number, an endpoint with a delivered, a parked and a pending
  // delivery. Its clock is an hour behind the real one, which the server it moves to runs by: within
  // retention (it purges deliveries past theirs), and the pending one's retry is due at once there.
  const before = await sqliteTestDeps({
    env: { UPSTREAM_URL: sim.url, DEV_MODE: "1" },
    deps: { clock: new ManualClock(Date.now() - 3_600_000) },
  });
  cleanups.push(() => before.cleanup());
  const old = startApp(before);
  const a = await relayAccount(old.url);
  sim.addWaba({ wabaId: a.wabaId, accessToken: "token", appSecret: TEST_APP_SECRET });
  sim.addNumber(a.wabaId, { phoneNumberId: a.numbers[0]!, throughputLevel: "STANDARD" });
  const { key } = (await (
    await admin(old.url, "POST", `/admin/accounts/${a.id}/api-keys`, { mode: "live" })
  ).json()) as { key: string };
  const ep = await a.endpoint(rx.url);
  const event = (text: string) => eventBody([{ id: a.wabaId, changes: [messageChange(a.numbers[0]!, text)] }]);
  expect((await postUpstream(old.url, event("delivered"))).status).toBe(200);
  await old.app.relay.dispatcher.tick();
  rx.respond(() => new Response("gone", { status: 410 }));
  expect((await postUpstream(old.url, event("parked"))).status).toBe(200);
  await old.app.relay.dispatcher.tick();
  rx.respond(() => new Response("ok"));
  expect((await a.api("POST", `/api/endpoints/${ep.id}/enable`)).status).toBe(200);
  const parked = rx.received[1]!.headers["webhook-id"]!;
  expect((await a.api("GET", `/api/deliveries/${parked}`)).body).toMatchObject({
    status: "parked",
    payload_available: true,
  });
  rx.respond(() => new Response("busy", { status: 503 }));
  expect((await postUpstream(old.url, event("retried"))).status).toBe(200);
  await old.app.relay.dispatcher.tick();
  rx.respond(() => new Response("ok"));
  const retried = rx.received[2]!.headers["webhook-id"]!;
  expect((await a.api("GET", `/api/deliveries/${retried}`)).body).toMatchObject({ status: "pending" });
  // A proxied call in the request log (its own file beside the database) and its usage count.
  const logged = await fetch(`${old.url}/v21.0/${a.numbers[0]}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      messaging_product: "chat",
      to: "15551234567",
      type: "text",
      text: { body: "before the move" },
    }),
  });
  expect(logged.status).toBe(200);
  const {
    messages: [{ id: wamid }],
  } = (await logged.json()) as { messages: [{ id: string }] };
  await old.stop();
  await before.store.close();

  const target = await bareDatabase();
  const move = ["migrate", "--from", `file:${before.dbPath}`, "--to", target];
  const env = processEnv(before.dbPath);

  // Never beside a server running on the file.
  const lock = takeServerLock(before.dbPath);
  const refused = await runMain(move, env);
  lock.release();
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("is in use by another switchboard server");

  const moved = await runMain(move, env);
  expect(moved.stderr).not.toContain("failed");
  expect(moved.code).toBe(0);
  // The counts at the end, one line per table.
  for (const [table, rows] of [
    ["accounts", 1],
    ["users", 1],
    ["api_keys", 1],
    ["wabas", 1],
    ["numbers", 1],
    ["endpoints", 1],
    ["events", 3],
    ["deliveries", 3],
    ["attempts", 3],
    ["request_log", 1],
    ["usage_hours", 1],
  ] as const) {
    expect(moved.stdout).toMatch(new RegExp(`^  ${table} +${rows}$`, "m"));
  }
  // Progress as it went (a line per table when not on a terminal).
  expect(moved.stderr).toMatch(/^deliveries: 3 rows \(\d+\/\d+\)$/m);

  const again = await runMain(move, env);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain("already holds data");

  // The same deployment, now a scale-out instance on PostgreSQL.
  const port = freePort();
  const server = Bun.spawn([process.execPath, MAIN, "serve"], {
    cwd: ROOT,
    env: processEnv(before.dbPath, {
      DATABASE_URL: target,
      REDIS_URL: "redis://127.0.0.1:6379",
      REDIS_KEY_PREFIX: `sb-move-${port}:`,
      UPSTREAM_URL: sim.url,
      PORT: String(port),
      HOST: "127.0.0.1",
      DEV_MODE: "1",
      LOG_LEVEL: "warn",
    }),
    stdout: "ignore",
    stderr: "inherit",
  });
  cleanups.push(() => server.kill("SIGKILL"));
  const url = `http://127.0.0.1:${port}`;
  await waitForOk(`${url}/healthz`);

  // The old key still works, and the WABA's sealed token still opens: the simulator checks both.
  const send = await fetch(`${url}/v21.0/${a.numbers[0]}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      messaging_product: "chat",
      to: "15551234567",
      type: "text",
      text: { body: "after the move" },
    }),
  });
  expect(send.status).toBe(200);

  // The pending delivery is retried; new events reach the endpoint, signed with its secret as before.
  expect((await postUpstream(url, event("after the move"))).status).toBe(200);
  await until(() => rx.received.length >= 5, "the retry and the delivery after the move");
  const after = rx.received.slice(3, 5);
  const retry = after.find((r) => r.headers["webhook-id"] === retried);
  const fresh = after.find((r) => r !== retry);
  expect(retry?.body).toBe(rx.received[2]!.body);
  expect(() => new Webhook(ep.secret).verify(fresh!.body, fresh!.headers)).not.toThrow();

  // The parked delivery, with its payload, replays from PostgreSQL.
  // The user signs in with the same password.
  const movedAccount = await signedIn(url, a.user);
  expect(
    (await movedAccount.api("GET", `/api/requests/${logged.headers.get("x-proxy-request-id")}`)).body,
  ).toMatchObject({ status: 200, message_id: wamid });
  expect((await movedAccount.api("GET", `/api/deliveries/${parked}`)).body).toMatchObject({
    status: "parked",
    attempts: [{ status_code: 410 }],
  });
  const replay = await movedAccount.api<{ id: string; replay_of: string }>("POST", `/api/deliveries/${parked}/replay`);
  expect(replay.status).toBe(201);
  expect(replay.body.replay_of).toBe(parked);
  await until(() => rx.received.length >= 6, "the replay");
  expect(rx.received[5]!.body).toBe(rx.received[1]!.body);
  expect(rx.received[5]!.headers["webhook-id"]).toBe(replay.body.id);
});

/** The dashboard API of `url`, signed in as `user`. */
async function signedIn(url: string, user: { email: string; password: string }) {
  const session = await fetch(`${url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(user),
  });
  expect(session.status).toBe(204);
  const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
  const api = async <T = unknown>(method: string, path: string) => {
    const response = await fetch(`${url}${path}`, { method, headers: { cookie } });
    return { status: response.status, body: (await response.json()) as T };
  };
  return { api };
}

test("a row PostgreSQL cannot hold stops the move with its table, id and column named in one line (exit 2); nothing is copied; a target holding due work is refused", async () => {
  const before = await sqliteTestDeps({ env: { DEV_MODE: "1" } });
  cleanups.push(() => before.cleanup());
  const old = startApp(before);
  const a = await relayAccount(old.url);
  const ep = await a.endpoint("http://127.0.0.1:9/hook");
  await old.stop();
  await before.store.close();
  // As an older release stored it: a recover "since" far past any date (issue 26), kept by SQLite as a real.
  const file = new Database(before.dbPath);
  file.run(`INSERT INTO recoveries (id, account_id, endpoint_id, since, until, status, found, replayed, skipped_expired, skipped_replayed, started_at, updated_at)
    VALUES ('rcv_by_hand', '${a.id}', '${ep.id}', 9999999999999999999999999999999999999, 0, 'done', 0, 0, 0, 0, 0, 0)`);
  file.close();

  const target = await bareDatabase();
  const moved = await runMain(
    ["migrate", "--from", `file:${before.dbPath}`, "--to", target],
    processEnv(before.dbPath),
  );
  expect(moved.code).toBe(2);
  const lines = moved.stderr.split("\n").filter((line) => line.startsWith("switchboard:"));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain("recoveries row rcv_by_hand");
  expect(lines[0]).toContain("column since");
  expect(lines[0]).toContain("1e+37");
  expect(moved.stderr).not.toContain("invalid input syntax");
  // The whole move is one transaction: the target holds nothing.
  const pg = new SQL({ url: target, max: 1 });
  cleanups.push(() => pg.close());
  expect(await pg.unsafe("SELECT id FROM accounts")).toEqual([]);

  // A target whose only row is due work, a table of PostgreSQL's own, is not empty either: the
  // move would otherwise stop on its key or leave it behind for the claim.
  const fixed = new Database(before.dbPath);
  fixed.run("DELETE FROM recoveries WHERE id = 'rcv_by_hand'");
  fixed.close();
  await pg.unsafe("INSERT INTO due_deliveries VALUES ('dlv_stray', 'ep_stray', 'evt_stray', 0)");
  const refused = await runMain(
    ["migrate", "--from", `file:${before.dbPath}`, "--to", target],
    processEnv(before.dbPath),
  );
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("already holds data (due_deliveries)");
  expect(await pg.unsafe("SELECT id FROM accounts")).toEqual([]);
});
