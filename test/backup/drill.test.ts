// The restore drill of docs/backups.md#the-restore-drill, run exactly as printed there, on a
// deployment that proxied calls, received events and billed usage before its backup: the restored
// server proxies with the old key, delivers to the old endpoint with its old secret, and answers
// the usage, the request log and a message's timeline as the old one did before the backup.
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { onSqlite } from "../support/backend.ts";
import { admin, tempDir } from "../support/harness.ts";
import { freePort, MAIN, processEnv, ROOT, waitForOk } from "../support/process.ts";
import { createAccount, signInCookie, type TestAccount } from "../dashboard/support.ts";
import { eventBody, postUpstream } from "../webhooks/support.ts";
import { serverProcess, until, upstreamWithNumber } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The drill's command block, as docs/backups.md prints it: the first `sh` block under its heading. */
function drillCommands(): string {
  const page = readFileSync(join(ROOT, "docs", "backups.md"), "utf8");
  const section = page.slice(page.indexOf("### The restore drill"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("docs/backups.md has no sh block under 'The restore drill'");
  return block;
}

/** JSON of an answer that must be 2xx. */
async function json<T>(response: Response | Promise<Response>): Promise<T> {
  const r = await response;
  if (r.status >= 300) throw new Error(`${r.url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

/** The dashboard API of `url` as `account`'s user. */
async function dashboard(url: string, account: TestAccount) {
  const cookie = await signInCookie(url, account);
  return <T>(path: string) => json<T>(fetch(`${url}${path}`, { headers: { cookie } }));
}

const statusChange = (phone: string, wamid: string, status: string) => ({
  field: "messages",
  value: {
    messaging_product: "chat",
    metadata: { display_phone_number: "15550001111", phone_number_id: phone },
    statuses: [{ id: wamid, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: "15551234567" }],
  },
});

describe.skipIf(!onSqlite)("the restore drill (docs/backups.md#the-restore-drill)", () => {
  test("run as printed, it serves what was there before the backup: old key, old endpoint, usage, request log, timelines", async () => {
    const wabaId = "3100200300";
    const phone = "3100200301";
    const { sim, rx, stop } = upstreamWithNumber(wabaId, phone, "token-of-the-old-deployment", "STANDARD");
    cleanups.push(stop);

    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const production = join(dir.path, "production");
    const backups = join(dir.path, "backup-store");
    const env = processEnv(join(production, "switchboard.db"), {
      UPSTREAM_URL: sim.url,
      DEV_MODE: "1",
      BACKUP_TO: backups,
      LOG_LEVEL: "warn",
    });
    const old = await serverProcess(env);
    cleanups.push(() => old.proc.kill("SIGKILL"));

    const account = await createAccount(old.url, "Acme");
    await json(
      admin(old.url, "POST", `/admin/accounts/${account.id}/wabas`, {
        waba_id: wabaId,
        access_token: "token-of-the-old-deployment",
      }),
    );
    await json(
      admin(old.url, "POST", `/admin/accounts/${account.id}/numbers`, {
        phone_number_id: phone,
        waba_id: wabaId,
        kind: "embedded",
      }),
    );
    const { key } = await json<{ key: string }>(
      admin(old.url, "POST", `/admin/accounts/${account.id}/api-keys`, { mode: "live" }),
    );
    const cookie = await signInCookie(old.url, account);
    const endpoint = await json<{ secret: string }>(
      fetch(`${old.url}/api/endpoints`, {
        method: "POST",
        headers: { cookie, "content-type": "application/json" },
        body: JSON.stringify({ url: rx.url, fields: ["messages"] }),
      }),
    );

    // Seven sends and one call refused (a media read without its number), then a status of the first send.
    const send = (url: string) =>
      fetch(`${url}/v21.0/${phone}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ messaging_product: "chat", to: "15551234567", type: "text", text: { body: "hi" } }),
      });
    const wamids: string[] = [];
    for (let i = 0; i < 7; i++) {
      wamids.push((await json<{ messages: { id: string }[] }>(send(old.url))).messages[0]!.id);
    }
    const refused = await fetch(`${old.url}/v21.0/${phone}/message_templates`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(refused.status).toBe(404);
    expect(
      (
        await postUpstream(
          old.url,
          eventBody([{ id: wabaId, changes: [statusChange(phone, wamids[0]!, "delivered")] }]),
        )
      ).status,
    ).toBe(200);
    await until(() => rx.received.some((r) => r.body.includes(wamids[0]!)), "the status's delivery");

    // The backup right away: the calls are still in the server's memory, and it writes them first.
    const taken = await admin(old.url, "POST", "/admin/backups");
    expect(taken.status).toBe(201);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const before = await dashboard(old.url, account);
    const usageBefore = await json(admin(old.url, "GET", `/admin/usage?from=${since}`));
    const requestsBefore = await before<{ data: unknown[] }>("/api/requests");
    const timelineBefore = await before(`/api/messages/${encodeURIComponent(wamids[0]!)}`);
    expect(requestsBefore.data).toHaveLength(8);
    old.proc.kill("SIGTERM");
    expect(await old.proc.exited).toBe(0);

    // The spare machine: the production environment, a directory of its own, `switchboard` on PATH.
    const spare = join(dir.path, "spare");
    const bin = join(dir.path, "bin");
    mkdirSync(spare, { recursive: true });
    mkdirSync(bin, { recursive: true });
    const pids = join(dir.path, "pids");
    // Run from source from another directory: the repository's tsconfig (its JSX settings) named.
    const tsconfig = join(ROOT, "tsconfig.json");
    writeFileSync(
      join(bin, "switchboard"),
      `#!/bin/sh\necho $$ >> "${pids}"\nexec "${process.execPath}" --tsconfig-override "${tsconfig}" "${MAIN}" "$@"\n`,
    );
    chmodSync(join(bin, "switchboard"), 0o755);
    const port = freePort();
    const drill = Bun.spawn(["bash", "-euo", "pipefail", "-c", drillCommands()], {
      cwd: spare,
      env: { ...env, PATH: `${bin}:${env.PATH}`, PORT: String(port), HOST: "127.0.0.1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    cleanups.push(() => {
      for (const pid of readFileSync(pids, "utf8").split("\n").filter(Boolean)) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {
          // Already ended (the restore).
        }
      }
      drill.kill("SIGKILL");
    });
    const url = `http://127.0.0.1:${port}`;
    await Promise.race([
      waitForOk(`${url}/healthz`, 60_000),
      drill.exited.then(async (code) => {
        throw new Error(`the drill ended (${code}): ${await new Response(drill.stderr).text()}`);
      }),
    ]);

    // As before the backup: the usage, the request log and the first message's timeline.
    const after = await dashboard(url, account);
    expect(await json(admin(url, "GET", `/admin/usage?from=${since}`))).toEqual(usageBefore);
    expect(await after<{ data: unknown[] }>("/api/requests")).toEqual(requestsBefore);
    expect(await after(`/api/messages/${encodeURIComponent(wamids[0]!)}`)).toEqual(timelineBefore);

    // The old key proxies (the simulator checks the WABA's token, sealed in the backup).
    const accepted = sim.accepted.length;
    expect((await send(url)).status).toBe(200);
    expect(sim.accepted.length).toBe(accepted + 1);
    // The old endpoint receives, signed with its old secret.
    const fresh = statusChange(phone, wamids[1]!, "read");
    expect((await postUpstream(url, eventBody([{ id: wabaId, changes: [fresh] }]))).status).toBe(200);
    await until(() => rx.received.some((r) => r.body.includes(`"read"`)), "the delivery after the restore");
    const delivery = rx.received.find((r) => r.body.includes(`"read"`))!;
    expect(() => new Webhook(endpoint.secret).verify(delivery.body, delivery.headers)).not.toThrow();
  }, 120_000);
});
