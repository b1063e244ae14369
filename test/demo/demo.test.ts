import { afterEach, describe, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { tempDir } from "../support/harness.ts";
import { freePort, ROOT } from "../support/process.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `bun run dev` (the README's start command) in its own process group, its output collected. */
function runDev(env: Record<string, string>): {
  output: () => string;
  waitFor: (pattern: RegExp, ms?: number) => Promise<RegExpMatchArray>;
  stop: () => Promise<void>;
} {
  let output = "";
  const child: ChildProcess = spawn(process.execPath, ["run", "dev"], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "warn", ...env },
  });
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    // bun --watch runs the server in a child: end the whole group.
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      return;
    }
    await exited;
  };
  cleanups.push(stop);
  return {
    output: () => output,
    stop,
    async waitFor(pattern, ms = 30_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const match = output.match(pattern);
        if (match) return match;
        if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${output}`);
        await Bun.sleep(50);
      }
    },
  };
}

async function sh(command: string): Promise<string> {
  const proc = Bun.spawn(["sh", "-c", command], { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`${command} failed: ${err}`);
  return out;
}

const line = (output: string, after: RegExp) => {
  const lines = output.split("\n");
  return lines[lines.findIndex((l) => after.test(l)) + 1]!.trim();
};

/** The banner's console line: `console    <url>/operator   email E   password P …`. */
function consoleLogin(output: string): { url: string; email: string; password: string } {
  const m = output.match(/^ {2}console +(\S+\/operator) +email (\S+) +password (\S+)/m);
  if (!m) throw new Error(`no console line in:\n${output}`);
  return { url: m[1]!, email: m[2]!, password: m[3]! };
}

async function operatorSignIn(login: { url: string; email: string; password: string }): Promise<string> {
  const r = await fetch(`${login.url}/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: login.email, password: login.password }),
  });
  if (r.status !== 204) throw new Error(`operator sign-in: ${r.status}`);
  return r.headers.get("set-cookie")!.split(";")[0]!;
}

describe("the demo (`bun run dev`)", () => {
  test("the printed curl line sends a message to the simulator and its signed status webhooks reach the demo receiver; the printed console login opens /operator; a restart keeps the account and rotates the credentials", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const env = { PORT: String(freePort()), HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir.path, "demo.db")}` };

    const first = runDev(env);
    await first.waitFor(/Open the dashboard/);
    const sendLine = line(first.output(), /^1\) Send a message/);
    expect(sendLine).toStartWith("curl ");
    const answer = JSON.parse(await sh(sendLine)) as { messages: { id: string }[] };
    const messageId = answer.messages[0]!.id;
    expect(messageId).toStartWith("wamid.");
    await first.waitFor(new RegExp(`simulator: accepted text message ${messageId.replace(".", "\\.")}`));
    for (const status of ["sent", "delivered", "read"]) {
      await first.waitFor(
        new RegExp(`demo receiver: verified msg_\\w+: status ${status} for ${messageId.replace(".", "\\.")}`),
      );
    }
    expect(first.output()).not.toContain("REJECTED");

    // The second printed line signs in and lists the endpoint's deliveries.
    const listing = JSON.parse(await sh(line(first.output(), /^2\) /))) as { data: { status: string }[] };
    expect(listing.data.filter((d) => d.status === "succeeded").length).toBeGreaterThanOrEqual(3);
    const dashboard = first.output().match(/3\) Open the dashboard: (\S+)/)![1]!;
    expect((await fetch(dashboard, { redirect: "manual" })).status).toBeLessThan(400);
    // The operator's side: the printed console login signs in, and the overview answers.
    const operator = consoleLogin(first.output());
    expect(first.output()).toContain(`4) Open the operator console: ${operator.url}`);
    const cookie = await operatorSignIn(operator);
    expect((await fetch(operator.url, { headers: { cookie }, redirect: "manual" })).status).toBe(200);
    await first.stop();

    const second = runDev(env);
    await second.waitFor(/Open the dashboard/);
    const again = line(second.output(), /^1\) Send a message/);
    expect(again).not.toBe(sendLine);
    // Same number, same account; the first run's key has been revoked.
    expect(again.match(/\/v\d+\.0\/(\d+)\//)![1]).toBe(sendLine.match(/\/v\d+\.0\/(\d+)\//)![1]);
    expect(JSON.parse(await sh(sendLine)).error.code).toBe(1001);
    expect(JSON.parse(await sh(again)).messages[0].id).toStartWith("wamid.");
    await second.waitFor(/demo receiver: verified msg_\w+: status read/);
    // A new console password too: the first run's no longer signs in; its session stays (`bun --watch`
    // restarts at every save, which must not sign the browser out).
    await expect(operatorSignIn(operator)).rejects.toThrow("401");
    expect((await fetch(operator.url, { headers: { cookie }, redirect: "manual" })).status).toBe(200);
    const again2 = consoleLogin(second.output());
    expect(again2.email).toBe(operator.email);
    await operatorSignIn(again2);
    expect(second.output()).not.toContain("REJECTED");
  }, 120_000);
});
