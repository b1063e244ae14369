import { afterEach, expect, test } from "bun:test";
import { appsecretProof } from "../../src/crypto/appsecret-proof.ts";
import { freePort, MAIN, ROOT } from "../support/process.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

test("`switchboard simulate` serves the WABAs and numbers named on its command line, and its control API", async () => {
  const port = freePort();
  const proc = Bun.spawn([process.execPath, MAIN, "simulate", "--port", String(port), "--waba", "1234:EAAGsim", "--number", "1234:5678:HIGH"], {
    cwd: ROOT, env: { PATH: process.env.PATH ?? "", APP_SECRET: "sim-secret" }, stdout: "pipe", stderr: "pipe",
  });
  cleanups.push(async () => {
    proc.kill("SIGTERM");
    await proc.exited;
  });
  const url = `http://127.0.0.1:${port}`;
  const read = `${url}/v21.0/5678?fields=throughput&appsecret_proof=${appsecretProof("EAAGsim", "sim-secret")}`;
  let answer: Response | undefined;
  for (let i = 0; i < 300 && !answer; i++) {
    answer = await fetch(read, { headers: { authorization: "Bearer EAAGsim" } }).catch(() => Bun.sleep(50).then(() => undefined));
  }
  if (!answer) throw new Error("the simulator did not start");
  expect(answer.status).toBe(200);
  expect(await answer.json()).toMatchObject({ id: "5678", throughput: { level: "HIGH" } });

  const fault = await fetch(`${url}/_sim/faults`, { method: "POST", body: JSON.stringify({ id: "5678", error: 368, times: 1 }) });
  expect(fault.status).toBe(204);
  const failed = await fetch(read, { headers: { authorization: "Bearer EAAGsim" } });
  expect(((await failed.json()) as { error: { code: number } }).error.code).toBe(368);
  // Without --webhook-url there is nowhere to send an inbound message.
  expect((await fetch(`${url}/_sim/inbound`, { method: "POST", body: JSON.stringify({ phone_number_id: "5678" }) })).status).toBe(409);
});

test("`switchboard simulate` with a bad flag is a usage error, exit 2", async () => {
  const proc = Bun.spawn([process.execPath, MAIN, "simulate", "--number", "9:10"], { cwd: ROOT, env: { PATH: process.env.PATH ?? "" }, stderr: "pipe", stdout: "pipe" });
  expect(await proc.exited).toBe(2);
  expect(await new Response(proc.stderr).text()).toContain("Usage: switchboard simulate");
});
