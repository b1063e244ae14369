import { afterEach, expect, test } from "bun:test";
import { appsecretProof } from "../../src/crypto/appsecret-proof.ts";
import { freePort, MAIN, ROOT } from "../support/process.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

test("`switchboard simulate` serves the WABAs and numbers named on its command line, and its control API", async () => {
  const port = freePort();
  const proc = Bun.spawn(
    [
      process.execPath,
      MAIN,
      "simulate",
      "--port",
      String(port),
      "--waba",
      "1234:EAAGsim",
      "--number",
      "1234:5678:HIGH",
    ],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", APP_SECRET: "sim-secret" },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  cleanups.push(async () => {
    proc.kill("SIGTERM");
    await proc.exited;
  });
  const url = `http://127.0.0.1:${port}`;
  const read = `${url}/v21.0/5678?fields=throughput&appsecret_proof=${appsecretProof("EAAGsim", "sim-secret")}`;
  let answer: Response | undefined;
  for (let i = 0; i < 300 && !answer; i++) {
    answer = await fetch(read, { headers: { authorization: "Bearer EAAGsim" } }).catch(() =>
      Bun.sleep(50).then(() => undefined),
    );
  }
  if (!answer) throw new Error("the simulator did not start");
  expect(answer.status).toBe(200);
  expect(await answer.json()).toMatchObject({ id: "5678", throughput: { level: "HIGH" } });

  const fault = await fetch(`${url}/_sim/faults`, {
    method: "POST",
    body: JSON.stringify({ id: "5678", error: 368, times: 1 }),
  });
  expect(fault.status).toBe(204);
  const failed = await fetch(read, { headers: { authorization: "Bearer EAAGsim" } });
  expect(((await failed.json()) as { error: { code: number } }).error.code).toBe(368);
  // Without --webhook-url there is nowhere to send an inbound message.
  expect(
    (await fetch(`${url}/_sim/inbound`, { method: "POST", body: JSON.stringify({ phone_number_id: "5678" }) })).status,
  ).toBe(409);

  // Embedded Signup's stand-in: the SDK, the popup finishing a signup, and its code exchanged once for APP_SECRET's app.
  expect(await (await fetch(`${url}/_sim/signup/sdk.js`)).text()).toContain("login: function");
  const dialog = `${url}/_sim/signup/dialog?app_id=1000000000000001&config_id=42`;
  expect(await (await fetch(dialog)).text()).toContain("Finish");
  const finished = await (
    await fetch(dialog, {
      method: "POST",
      body: new URLSearchParams({ action: "finish", waba_id: "777", phone_number_id: "778" }),
    })
  ).text();
  expect(finished).toContain('\\"phone_number_id\\":\\"778\\"');
  const code = /code: "([^"]+)"/.exec(finished)![1]!;
  const exchange = () =>
    fetch(`${url}/v21.0/oauth/access_token?client_id=1000000000000001&client_secret=sim-secret&code=${code}`);
  const token = ((await (await exchange()).json()) as { access_token: string }).access_token;
  expect(token).toStartWith("EAAG");
  expect(((await (await exchange()).json()) as { error: { error_subcode: number } }).error.error_subcode).toBe(36009);
  const number = await fetch(`${url}/v21.0/778?appsecret_proof=${appsecretProof(token, "sim-secret")}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(number.status).toBe(200);
});

test("`switchboard simulate` with a bad flag is a usage error, exit 2", async () => {
  const proc = Bun.spawn([process.execPath, MAIN, "simulate", "--number", "9:10"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "" },
    stderr: "pipe",
    stdout: "pipe",
  });
  expect(await proc.exited).toBe(2);
  expect(await new Response(proc.stderr).text()).toContain("Usage: switchboard simulate");
});
