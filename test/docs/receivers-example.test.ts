import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { DeliveryJson, PageJson } from "../support/api-json.ts";
import { eventBody, messageChange, relayApp } from "../webhooks/support.ts";

// docs/receivers.md's examples, taken from the page as written and run against real deliveries to
// platform-signed endpoints (docs/webhooks.md#signature-schemes).

const page = await Bun.file(new URL("../../docs/receivers.md", import.meta.url)).text();
function example(name: string, lang: "ts" | "python"): string {
  const marker = page.indexOf(`<!-- example: ${name} -->`);
  expect(marker).toBeGreaterThan(0);
  const start = page.indexOf(`\`\`\`${lang}\n`, marker) + lang.length + 4;
  return page.slice(start, page.indexOf("\n```", start));
}

// Under node_modules so that the examples' imports resolve to the project's packages.
const dir = mkdtempSync(join(import.meta.dir, "../../node_modules/.receivers-examples-"));
const app = await relayApp();
const bots: { close(): unknown }[] = [];
afterAll(async () => {
  for (const bot of bots) bot.close();
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});
const a = await app.account();

/** Loads a TypeScript example as a module. */
async function load<T>(name: string): Promise<T> {
  const file = join(dir, `${name}.ts`);
  await Bun.write(file, example(name, "ts"));
  return (await import(file)) as T;
}

async function listen(server: Server): Promise<string> {
  bots.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
}

/** A platform endpoint at `url` with `token`; `start` is given its secret. */
async function endpointFor(start: (secret: string) => Promise<string>, token: string) {
  // The URL is known only once the bot runs, and the bot needs the secret: make, then point.
  const r = await a.api<{ id: string; secret: string }>("POST", "/api/endpoints", {
    url: "http://127.0.0.1:9/unused",
    fields: ["messages"],
    signature: "platform",
    verify_token: token,
  });
  const url = await start(r.body.secret);
  await a.api("PATCH", `/api/endpoints/${r.body.id}`, { url });
  return r.body.id;
}

/** Posts a two-change event with non-ASCII text and answers the endpoint's deliveries. */
async function deliverTo(endpointId: string) {
  const changes = [messageChange(a.numbers[0]!, "olá 👋"), messageChange(a.numbers[0]!, "ça va ?")];
  expect((await app.post(eventBody([{ id: a.wabaId, changes }]))).status).toBe(200);
  await app.tick();
  const list = await a.api<PageJson<DeliveryJson>>("GET", `/api/deliveries?endpoint_id=${endpointId}`);
  return list.body.data.map((d) => d.status);
}

const verify = async (id: string) =>
  (await a.api<{ verified: boolean }>("POST", `/api/endpoints/${id}/verify`)).body.verified;

describe("docs/receivers.md examples accept real deliveries", () => {
  test("whatsapp-api-js: every change delivered and accepted; Verify answered", async () => {
    const { bot } = await load<{ bot: (s: string, t: string) => Server }>("whatsapp-api-js");
    const id = await endpointFor((secret) => listen(bot(secret, "tok-a")), "tok-a");
    expect(await deliverTo(id)).toEqual(["succeeded", "succeeded"]);
    expect(await verify(id)).toBe(true);
  });

  test("Kapso: every change delivered and accepted", async () => {
    const { bot } = await load<{ bot: (s: string) => Server }>("kapso");
    const id = await endpointFor((secret) => listen(bot(secret)), "tok-k");
    expect(await deliverTo(id)).toEqual(["succeeded", "succeeded"]);
  });

  test("Chat SDK: every change delivered and accepted; Verify answered", async () => {
    const { bot } = await load<{ bot: (s: string, t: string) => (r: Request) => Promise<Response> }>("chat-adapter");
    const id = await endpointFor(async (secret) => {
      const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: bot(secret, "tok-c") });
      bots.push({ close: () => server.stop(true) });
      return `http://127.0.0.1:${server.port}/webhook`;
    }, "tok-c");
    expect(await deliverTo(id)).toEqual(["succeeded", "succeeded"]);
    expect(await verify(id)).toBe(true);
  });

  // pywa's own language; a machine without python3 (Node.js and npm only) cannot run it.
  test.skipIf(!Bun.which("python3"))(
    "pywa's check accepts a real delivery's bytes and header, and refuses another secret",
    async () => {
      const rx = app.receiver();
      const r = await a.api<{ id: string; secret: string }>("POST", "/api/endpoints", {
        url: rx.url,
        fields: ["messages"],
        signature: "platform",
      });
      await deliverTo(r.body.id);
      const got = rx.received.at(-1)!;
      const file = join(dir, "pywa_check.py");
      const run = async (secret: string) => {
        const script = `${example("pywa-check", "python")}\nimport sys\nprint(signature_ok(sys.argv[1], sys.stdin.buffer.read(), sys.argv[2]))\n`;
        await Bun.write(file, script);
        const p = Bun.spawn(["python3", file, secret, got.headers["x-hub-signature-256"]!], {
          stdin: new TextEncoder().encode(got.body),
          stdout: "pipe",
        });
        return (await new Response(p.stdout).text()).trim();
      };
      expect(await run(r.body.secret)).toBe("True");
      expect(await run(`${r.body.secret}x`)).toBe("False");
    },
  );
});
