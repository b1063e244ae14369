import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { onSqlite } from "../support/backend.ts";
import { admin, tempDir } from "../support/harness.ts";
import { processEnv, runMain } from "../support/process.ts";
import { eventBody, messageChange, postUpstream } from "../webhooks/support.ts";
import { padDatabase, serverProcess, until, upstreamWithNumber } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer(env: Record<string, string>) {
  const started = await serverProcess(env);
  cleanups.push(() => started.proc.kill("SIGKILL"));
  return started;
}

/** The JSON of a successful answer, as the shape the caller expects (`unknown` unless it says). */
async function json<T = unknown>(response: Promise<Response>): Promise<T> {
  const r = await response;
  if (r.status >= 300) throw new Error(`${r.url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

/** The dashboard API of `url`, signed in as `user`. */
async function signIn(url: string, user: { email: string; password: string }) {
  const session = await fetch(`${url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(user),
  });
  expect(session.status).toBe(204);
  const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
  return <T = unknown>(method: string, path: string, body?: unknown) =>
    json<T>(
      fetch(`${url}${path}`, {
        method,
        headers: { cookie, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
}

describe.skipIf(!onSqlite)("an online backup", () => {
  test("taken while the relay acknowledges events and the proxy serves: verified; restored, a new server proxies with the old keys and tokens, delivers with the old signing secrets, and holds every event acknowledged before it began", async () => {
    const wabaId = "1200300400";
    const phone = "5500600700";
    const { sim, rx, stop } = upstreamWithNumber(wabaId, phone, "token-before-the-backup", "HIGH");
    cleanups.push(stop);

    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const dbPath = join(dir.path, "switchboard.db");
    // Some bulk, so that the snapshot takes a moment while the load goes on.
    padDatabase(dbPath, 20);
    const backups = join(dir.path, "backups");
    const env = processEnv(dbPath, { UPSTREAM_URL: sim.url, DEV_MODE: "1", BACKUP_TO: backups, LOG_LEVEL: "warn" });
    const old = await startServer(env);

    const account = await json<{ id: string }>(
      admin(old.url, "POST", "/admin/accounts", { name: "Acme", email: "ops@acme.example" }),
    );
    await json(
      admin(old.url, "POST", `/admin/accounts/${account.id}/wabas`, {
        waba_id: wabaId,
        access_token: "token-before-the-backup",
      }),
    );
    expect(
      await json(
        admin(old.url, "POST", `/admin/accounts/${account.id}/numbers`, {
          phone_number_id: phone,
          waba_id: wabaId,
          kind: "embedded",
        }),
      ),
    ).toMatchObject({ throughput_level: "HIGH" });
    const { key } = await json<{ key: string }>(
      admin(old.url, "POST", `/admin/accounts/${account.id}/api-keys`, { mode: "live" }),
    );
    const user = { email: "you@acme.example", password: "correct horse battery" };
    await json(admin(old.url, "POST", `/admin/accounts/${account.id}/users`, user));
    const endpoint = await (await signIn(old.url, user))<{ secret: string }>("POST", "/api/endpoints", {
      url: rx.url,
      fields: ["messages"],
    });

    // The load: events acknowledged by the relay, and messages sent through the proxy.
    const acked: { messageId: string; at: number }[] = [];
    const failures: string[] = [];
    let proxied = 0;
    let running = true;
    const sendEvents = async () => {
      while (running) {
        const change = messageChange(phone, "during the backup");
        const response = await postUpstream(old.url, eventBody([{ id: wabaId, changes: [change] }]));
        if (response.status === 200) acked.push({ messageId: change.value.messages[0]!.id, at: performance.now() });
        else failures.push(`ingress ${response.status}`);
      }
    };
    const send = (url: string, text: string) =>
      fetch(`${url}/v21.0/${phone}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ messaging_product: "chat", to: "15551234567", type: "text", text: { body: text } }),
      });
    const sendMessages = async () => {
      while (running) {
        const response = await send(old.url, "during the backup");
        // Past the number's bucket (1,000/s) a call is answered 429, as it should be.
        if (response.status === 200) proxied++;
        else if (response.status !== 429) failures.push(`proxy ${response.status}`);
        await response.arrayBuffer();
      }
    };
    const load = [sendEvents(), sendEvents(), sendEvents(), sendMessages(), sendMessages()];
    await until(() => acked.length >= 200, "events acknowledged before the backup");

    const began = performance.now();
    const ackedBefore = acked.filter((event) => event.at < began).map((event) => event.messageId);
    const proxiedBefore = proxied;
    const taken = await runMain(["backup"], env);
    const ackedDuring = acked.filter((event) => event.at >= began).length;
    running = false;
    await Promise.all(load);

    expect(taken.stderr).not.toContain("failed");
    expect(taken.code).toBe(0);
    const manifest = JSON.parse(taken.stdout) as { name: string; counts: Record<string, number> };
    expect(manifest.counts.events).toBeGreaterThanOrEqual(ackedBefore.length);
    expect(failures).toEqual([]);
    // The relay and the proxy went on answering while the backup was taken.
    expect(ackedDuring).toBeGreaterThan(0);
    expect(proxied).toBeGreaterThan(proxiedBefore);
    old.proc.kill("SIGTERM");
    expect(await old.proc.exited).toBe(0);

    const restoredPath = join(dir.path, "restored", "switchboard.db");
    const restored = await runMain(
      ["restore", "--from", join(backups, manifest.name), "--to", `file:${restoredPath}`],
      env,
    );
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(new RegExp(`^ {2}events +${manifest.counts.events!.toLocaleString("en")}$`, "m"));

    const next = await startServer({ ...env, DATABASE_URL: `file:${restoredPath}` });
    // The old API key passes, and the WABA's sealed token still opens: the simulator checks both.
    const acceptedBefore = sim.accepted.length;
    const sent = await send(next.url, "after the restore");
    expect(sent.status).toBe(200);
    expect(sim.accepted.length).toBe(acceptedBefore + 1);

    // A new event reaches the endpoint signed with its old secret.
    const fresh = messageChange(phone, "after the restore");
    expect((await postUpstream(next.url, eventBody([{ id: wabaId, changes: [fresh] }]))).status).toBe(200);
    await until(
      () => rx.received.some((r) => r.body.includes(fresh.value.messages[0]!.id)),
      "the delivery after the restore",
    );
    const delivery = rx.received.find((r) => r.body.includes(fresh.value.messages[0]!.id))!;
    expect(() => new Webhook(endpoint.secret).verify(delivery.body, delivery.headers)).not.toThrow();

    // Every event acknowledged before the backup began is there, with its delivery.
    const api = await signIn(next.url, user);
    const missing: string[] = [];
    for (let i = 0; i < ackedBefore.length; i += 20) {
      await Promise.all(
        ackedBefore.slice(i, i + 20).map(async (messageId) => {
          const found = await api<{ data: unknown[] }>(
            "GET",
            `/api/deliveries?message_id=${encodeURIComponent(messageId)}`,
          );
          if (found.data.length !== 1) missing.push(messageId);
        }),
      );
    }
    expect(missing).toEqual([]);
  }, 120_000);
});
