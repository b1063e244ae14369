import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { embeddedMigrations as postgresMigrations } from "../../db/postgres.gen.ts";
import { startSimulator } from "../../src/simulator/server.ts";
import { postgresAdmin, postgresUrl, testBackend } from "../support/backend.ts";
import { admin, TEST_APP_SECRET } from "../support/harness.ts";
import { freePort, MAIN, processEnv, ROOT, waitForOk } from "../support/process.ts";
import { eventBody, messageChange, postUpstream, relayAccount } from "../webhooks/support.ts";
import { countingReceiver, scaleOut, until } from "./instances.ts";

// docs/operations.md#scale-out with real `switchboard serve` processes on one PostgreSQL database and one Redis
// prefix: any number of instances behave exactly as one. Only on the PostgreSQL pass.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function twoInstances(env: Record<string, string> = {}) {
  const sim = startSimulator();
  cleanups.push(() => sim.stop());
  const cluster = await scaleOut({ UPSTREAM_URL: sim.url, ...env });
  cleanups.push(() => cluster.stop());
  const [a, b] = [await cluster.start(), await cluster.start()];
  return { sim, cluster, a: a!, b: b! };
}

/**
 * An account made through the first instance, its WABA and numbers known to the simulator, with a
 * live key; resolves once every instance knows them (docs/operations.md#scale-out gives that a second), checked
 * with a read of the number, which spends the WABA's bucket and not the number's.
 */
async function business(sim: ReturnType<typeof startSimulator>, urls: string[], numbers = 1) {
  const account = await relayAccount(urls[0]!, { numbers });
  sim.addWaba({ wabaId: account.wabaId, accessToken: "token", appSecret: TEST_APP_SECRET });
  for (const number of account.numbers)
    sim.addNumber(account.wabaId, { phoneNumberId: number, throughputLevel: "STANDARD" });
  const created = (await (
    await admin(urls[0]!, "POST", `/admin/accounts/${account.id}/api-keys`, { mode: "live" })
  ).json()) as { id: string; key: string };
  for (const url of urls) {
    await until(
      async () =>
        (await fetch(`${url}/v21.0/${account.numbers.at(-1)}`, { headers: { authorization: `Bearer ${created.key}` } }))
          .status === 200,
      `${url} to know the new key and number`,
      2_000,
    );
  }
  return { ...account, keyId: created.id, key: created.key };
}

/** An instance's /healthz answer. */
async function healthz(url: string) {
  return (await (await fetch(`${url}/healthz`)).json()) as {
    instance: string;
    instances: { id: string; started_at: string; last_beat_at: string }[];
  };
}

/**
 * One instance, a on a cluster of its own (`env` added), with an account whose endpoint is a
 * receiver that holds every request: resolves once a's attempt of one event is in flight there.
 * `frozen`: a second instance b is started first, has seen a beat, and is paused (SIGSTOP), so the
 * attempt can only be a's, and b is there to take over the moment it is resumed.
 */
async function attemptInFlight(env: Record<string, string> = {}, frozen = false) {
  const sim = startSimulator();
  cleanups.push(() => sim.stop());
  const cluster = await scaleOut({ UPSTREAM_URL: sim.url, ...env });
  cleanups.push(() => cluster.stop());
  const rx = countingReceiver();
  cleanups.push(() => rx.stop());
  const a = await cluster.start();
  const biz = await business(sim, [a.url]);
  await biz.endpoint(rx.url("/hook"));
  const b = frozen ? await second(cluster) : null;
  b?.signal("SIGSTOP");
  rx.hold();
  const change = messageChange(biz.numbers[0]!, "in flight");
  expect((await postUpstream(a.url, eventBody([{ id: biz.wabaId, changes: [change] }]))).status).toBe(200);
  await until(() => rx.arrivals.length === 1, "a's attempt to reach the receiver");
  return { cluster, rx, a, b, biz };
}

/** Another instance of the cluster, started once `a` is; resolves once it has seen `a` beat. */
async function second(cluster: Awaited<ReturnType<typeof scaleOut>>) {
  const b = await cluster.start();
  await until(async () => (await healthz(b.url)).instances.length === 2, "b to see a beating");
  return b;
}

const send = (url: string, number: string, key: string) =>
  fetch(`${url}/v21.0/${number}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ messaging_product: "chat", to: "15551234567", type: "text", text: { body: "hi" } }),
  });

describe.skipIf(testBackend() !== "postgres")("scale-out: two instances on one PostgreSQL and Redis", () => {
  test("a burst to one standard number spread over both passes the bucket's 80, not 80 per instance, and the headers count across both", async () => {
    const { sim, a, b } = await twoInstances();
    const biz = await business(sim, [a.url, b.url]);
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => send(i % 2 === 0 ? a.url : b.url, biz.numbers[0]!, biz.key)),
    );
    const seconds = (performance.now() - started) / 1000;
    const passed = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 429);
    expect(passed.length + refused.length).toBe(200);
    // The bucket holds 80 and refills at 80 per second while the burst lasts.
    expect(passed.length).toBeGreaterThanOrEqual(80);
    expect(passed.length).toBeLessThanOrEqual(80 + Math.ceil(80 * seconds));
    expect(refused[0]!.headers.get("ratelimit-remaining")).toBe("0");
    expect(refused[0]!.headers.get("retry-after")).toBe("1");
    // Each instance's answers name the shared bucket's level, not a bucket of its own.
    const remaining = passed.map((r) => Number(r.headers.get("ratelimit-remaining")));
    expect(Math.min(...remaining)).toBeLessThanOrEqual(1);
  });

  test("a key revoked through one instance is refused by the other within 1 s", async () => {
    const { sim, a, b } = await twoInstances();
    const biz = await business(sim, [a.url, b.url]);
    expect((await send(b.url, biz.numbers[0]!, biz.key)).status).toBe(200);
    expect((await admin(a.url, "DELETE", `/admin/api-keys/${biz.keyId}`)).status).toBe(204);
    const revoked = performance.now();
    await until(
      async () => (await send(b.url, biz.numbers[0]!, biz.key)).status === 401,
      "instance b to refuse the revoked key",
      1_000,
    );
    expect(performance.now() - revoked).toBeLessThanOrEqual(1_000);
  });

  test("an endpoint created through one instance receives, within 1 s, events posted to the other", async () => {
    const { sim, a, b } = await twoInstances();
    const rx = countingReceiver();
    cleanups.push(() => rx.stop());
    const biz = await business(sim, [a.url, b.url]);
    await biz.endpoint(rx.url("/created-on-a"));
    const created = performance.now();
    // Events posted to b until one is delivered: the first delivered one was posted within 1 s.
    const posted = new Map<string, number>();
    await until(
      async () => {
        const change = messageChange(biz.numbers[0]!, "probe");
        posted.set((change.value.messages[0] as { id: string }).id, performance.now());
        expect((await postUpstream(b.url, eventBody([{ id: biz.wabaId, changes: [change] }]))).status).toBe(200);
        return (rx.seen.get("/created-on-a")?.length ?? 0) > 0;
      },
      "a delivery of an event posted to b",
      3_000,
    );
    const first = rx.seen.get("/created-on-a")![0]!;
    expect(posted.get(first)! - created).toBeLessThanOrEqual(1_000);
  });

  test("what one instance wrote, the next operator or dashboard call to the other sees at once: account, WABA, number, user, endpoint", async () => {
    const { sim, a, b } = await twoInstances();
    const { id } = (await (
      await admin(a.url, "POST", "/admin/accounts", { name: "Across", email: "across@example.com" })
    ).json()) as { id: string };
    sim.addWaba({ wabaId: "waba-across", accessToken: "t", appSecret: TEST_APP_SECRET });
    sim.addNumber("waba-across", { phoneNumberId: "pn-across", throughputLevel: "STANDARD" });
    expect(
      (await admin(b.url, "POST", `/admin/accounts/${id}/wabas`, { waba_id: "waba-across", access_token: "t" })).status,
    ).toBe(201);
    expect(
      (
        await admin(a.url, "POST", `/admin/accounts/${id}/numbers`, {
          phone_number_id: "pn-across",
          waba_id: "waba-across",
          kind: "embedded",
        })
      ).status,
    ).toBe(201);
    expect(await (await admin(b.url, "GET", "/admin/numbers/pn-across")).json()).toMatchObject({
      status: "connected",
      kind: "embedded",
    });
    expect(
      (
        await admin(b.url, "POST", `/admin/accounts/${id}/users`, {
          email: "u@across.example",
          password: "correct horse battery",
        })
      ).status,
    ).toBe(201);
    const session = await fetch(`${a.url}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "u@across.example", password: "correct horse battery" }),
    });
    const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
    const created = await fetch(`${b.url}/api/endpoints`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ url: "http://127.0.0.1:9/across", fields: ["messages"] }),
    });
    expect(created.status).toBe(201);
    const { id: endpointId } = (await created.json()) as { id: string };
    expect((await fetch(`${a.url}/api/endpoints/${endpointId}`, { headers: { cookie } })).status).toBe(200);
  });

  test("500 events posted alternately to both are each delivered once per matching endpoint, never more than 10 at once to one endpoint", async () => {
    const { sim, a, b } = await twoInstances();
    const rx = countingReceiver(5);
    cleanups.push(() => rx.stop());
    const biz = await business(sim, [a.url, b.url], 2);
    await biz.endpoint(rx.url("/all"));
    await biz.endpoint(rx.url("/second-number"), ["messages"], biz.numbers[1]!);
    // Made through a: b has them within a second (docs/operations.md#scale-out); its first events wait for that.
    await until(
      async () => {
        await postUpstream(b.url, eventBody([{ id: biz.wabaId, changes: [messageChange(biz.numbers[1]!, "probe")] }]));
        return (rx.seen.get("/second-number")?.length ?? 0) > 0;
      },
      "b to know both endpoints",
      3_000,
    );
    const expected = { "/all": new Set<string>(), "/second-number": new Set<string>() };
    await Promise.all(
      Array.from({ length: 500 }, async (_, i) => {
        const number = biz.numbers[i % 5 === 0 ? 1 : 0]!;
        const change = messageChange(number, `event ${i}`);
        const id = (change.value.messages[0] as { id: string }).id;
        expected["/all"].add(id);
        if (number === biz.numbers[1]) expected["/second-number"].add(id);
        const response = await postUpstream(
          i % 2 === 0 ? a.url : b.url,
          eventBody([{ id: biz.wabaId, changes: [change] }]),
        );
        expect(response.status).toBe(200);
      }),
    );
    const arrived = (path: keyof typeof expected) =>
      (rx.seen.get(path) ?? []).filter((id) => expected[path].has(id)).length;
    await until(() => arrived("/all") >= 500 && arrived("/second-number") >= 100, "every delivery", 30_000);
    for (const [path, ids] of Object.entries(expected)) {
      // (the probes may still arrive: they are not these events)
      const got = rx.seen.get(path)!.filter((id) => ids.has(id));
      expect(got.length).toBe(ids.size);
      expect(new Set(got)).toEqual(ids);
      expect(rx.maxInFlight(path)).toBeLessThanOrEqual(10);
    }
    expect(rx.maxInFlight("/all")).toBeGreaterThan(1);
  });

  test("an instance killed with SIGKILL mid-attempt, before the receiver answered: the other, frozen until then, attempts the same webhook-id within 10 s of the kill, and lists only itself alive", async () => {
    const { rx, a, b } = await attemptInFlight({}, true);
    a.kill();
    await a.exited;
    const died = performance.now();
    // The premise: the kill landed while the attempt was in flight, and nobody else could attempt it.
    expect(rx.arrivals).toHaveLength(1);
    expect(rx.arrivals[0]!.answeredAt).toBeNull();
    await until(() => rx.arrivals[0]!.abortedAt !== null, "the receiver to see a's connection close", 2_000);
    b!.signal("SIGCONT");
    await until(() => rx.arrivals.length >= 2, "b's attempt", 15_000);
    console.log(`kill: attempted again by the other ${Math.round(rx.arrivals[1]!.at - died)} ms after the kill`);
    expect(rx.arrivals[1]!.at - died).toBeLessThanOrEqual(10_000);
    expect(rx.arrivals[1]!.webhookId).toBe(rx.arrivals[0]!.webhookId);
    await until(
      async () => (await healthz(b!.url)).instances.length === 1,
      "b to list only itself (it may still be re-registering after its pause)",
    );
    const health = await healthz(b!.url);
    expect(health.instances.map((i) => i.id)).toEqual([health.instance]);
    expect(await (await fetch(`${b!.url}/metrics`)).text()).toMatch(/switchboard_leases_taken_back_total 1\b/);
    rx.release();
  }, 60_000);

  test("the only instance, killed mid-attempt and started again: it attempts the same webhook-id within 5 s of starting", async () => {
    const { cluster, rx, a } = await attemptInFlight();
    a.kill();
    await a.exited;
    // The premise: the kill landed before the receiver answered.
    expect(rx.arrivals[0]!.answeredAt).toBeNull();
    // On the same port: the same instance (its id is the host name and port), started again.
    const spawned = performance.now();
    await cluster.start({}, a.port);
    await until(() => rx.arrivals.length >= 2, "the restarted instance's attempt", 15_000);
    // From the spawn, so from before it listened.
    console.log(`restart: attempted again ${Math.round(rx.arrivals[1]!.at - spawned)} ms after the spawn`);
    expect(rx.arrivals[1]!.at - spawned).toBeLessThanOrEqual(5_000);
    expect(rx.arrivals[1]!.webhookId).toBe(rx.arrivals[0]!.webhookId);
    rx.release();
  }, 60_000);

  test("a holder that was only slow (paused past its beats, then resumed) loses its late completion: the other attempts the same webhook-id, and it is recorded succeeded once", async () => {
    // Beats 5 times a second, taken for dead after a second of silence: the pause can be short.
    const { cluster, rx, a, biz } = await attemptInFlight({
      INSTANCE_HEARTBEAT_MS: "200",
      INSTANCE_DEAD_AFTER_MS: "1000",
    });
    const b = await second(cluster);
    a.signal("SIGSTOP");
    await until(() => rx.arrivals.length >= 2, "b's attempt", 15_000);
    const webhookId = rx.arrivals[0]!.webhookId;
    expect(rx.arrivals[1]!.webhookId).toBe(webhookId);
    // Both attempts are answered 200: b records its own; a, resumed, reads its answer late.
    rx.release();
    // Read through b: a is paused, and then busy with what it missed.
    const delivery = async () =>
      (await fetch(`${b.url}/api/deliveries/${webhookId}`, { headers: { cookie: biz.sessionCookie() } })).json();
    await until(async () => (await delivery()).status === "succeeded", "b's completion");
    a.signal("SIGCONT");
    await until(
      async () =>
        /switchboard_delivery_attempts_total\{outcome="succeeded"\} 1\b/.test(
          await (await fetch(`${a.url}/metrics`)).text(),
        ),
      "a to read its answer",
    );
    // a's completion comes in now, fenced out: whatever it wrote would show within a beat or two.
    for (const wait of [0, 200, 400, 800]) {
      await Bun.sleep(wait);
      expect(await delivery()).toMatchObject({
        status: "succeeded",
        attempt_count: 1,
        attempts: [{ status_code: 200 }],
      });
    }
    expect(rx.arrivals).toHaveLength(2);
  }, 60_000);

  test("two instances started together on an empty database migrate it once, and both serve", async () => {
    const name = `sb_scale_${process.pid}_${Date.now().toString(36)}`;
    await postgresAdmin().unsafe(`CREATE DATABASE ${name}`);
    cleanups.push(() => postgresAdmin().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    const ports = [freePort(), freePort()];
    const procs = ports.map((port) =>
      Bun.spawn([process.execPath, MAIN, "serve"], {
        cwd: ROOT,
        env: processEnv("", {
          DATABASE_URL: postgresUrl(name),
          REDIS_URL: "redis://127.0.0.1:6379",
          REDIS_KEY_PREFIX: `${name}:`,
          PORT: String(port),
          HOST: "127.0.0.1",
          LOG_LEVEL: "warn",
        }),
        stdout: "ignore",
        stderr: "inherit",
      }),
    );
    cleanups.push(async () => {
      for (const proc of procs) proc.kill("SIGKILL");
      await Promise.all(procs.map((p) => p.exited));
    });
    await Promise.all(ports.map((port) => waitForOk(`http://127.0.0.1:${port}/healthz`)));
    const db = new SQL({ url: postgresUrl(name), max: 1 });
    const [{ n }] = await db.unsafe("SELECT COUNT(*)::int AS n FROM drizzle.__drizzle_migrations");
    await db.close();
    expect(n).toBe(postgresMigrations.length);
  });
});
