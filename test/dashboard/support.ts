import { admin, startApp, testDeps, type TestDeps } from "../support/harness.ts";

/**
 * A fake upstream platform for number syncs: answers GET /{version}/{phone_number_id} with the
 * details set in `numbers`, and 401 with code 190 when the token is not the expected one.
 */
export function fakeUpstream(tokens: Set<string> = new Set(["good-token"])) {
  const numbers = new Map<string, { level?: string; display?: string; name?: string }>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      const id = url.pathname.split("/")[2] ?? "";
      const token = request.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
      if (!tokens.has(token)) {
        return Response.json(
          { error: { message: "Invalid OAuth access token.", type: "OAuthException", code: 190 } },
          { status: 401 },
        );
      }
      const details = numbers.get(id);
      if (!details)
        return Response.json(
          { error: { message: "Unsupported get request.", type: "GraphMethodException", code: 100 } },
          { status: 400 },
        );
      return Response.json({
        id,
        throughput: { level: details.level ?? "STANDARD" },
        display_phone_number: details.display ?? "+1 555 0100",
        verified_name: details.name ?? "Test Business",
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, numbers, tokens, stop: () => server.stop(true) };
}

export interface TestAccount {
  id: string;
  email: string;
  password: string;
}

/** An account with a dashboard login, made through the operator API. */
export async function createAccount(
  url: string,
  name: string,
  options: { maxNumbers?: number } = {},
): Promise<TestAccount> {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}@example.test`;
  const password = `pw-${name}-correct-horse`;
  const res = await admin(url, "POST", "/admin/accounts", { name, email, max_numbers: options.maxNumbers ?? null });
  if (res.status !== 201) throw new Error(`create account: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  const user = await admin(url, "POST", `/admin/accounts/${id}/users`, { email, password });
  if (user.status !== 201) throw new Error(`create user: ${user.status} ${await user.text()}`);
  return { id, email, password };
}

/** Connects a number the operator's way (WABA with the service's app, then the number). */
export async function operatorNumber(
  url: string,
  accountId: string,
  wabaId: string,
  phoneNumberId: string,
  kind = "embedded",
): Promise<void> {
  if ((await admin(url, "GET", `/admin/wabas/${wabaId}`)).status === 404) {
    const waba = await admin(url, "POST", `/admin/accounts/${accountId}/wabas`, {
      waba_id: wabaId,
      access_token: "good-token",
    });
    if (waba.status !== 201) throw new Error(`create waba: ${waba.status} ${await waba.text()}`);
  }
  const number = await admin(url, "POST", `/admin/accounts/${accountId}/numbers`, {
    phone_number_id: phoneNumberId,
    waba_id: wabaId,
    kind,
  });
  if (number.status !== 201) throw new Error(`create number: ${number.status} ${await number.text()}`);
}

/** Signs in through the API and returns the Cookie header value. */
export async function signInCookie(url: string, account: TestAccount): Promise<string> {
  const res = await fetch(`${url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: account.email, password: account.password }),
  });
  if (res.status !== 204) throw new Error(`sign in: ${res.status} ${await res.text()}`);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

/** A running app against a fake upstream, with everything torn down by `close`. */
export async function dashboardWorld(env: Record<string, string> = {}) {
  const upstream = fakeUpstream();
  const deps: TestDeps = await testDeps({ env: { UPSTREAM_URL: upstream.url, DEV_MODE: "1", ...env } });
  const app = startApp(deps);
  return {
    deps,
    upstream,
    url: app.url,
    /** The running app (its route table, for suites generated from it). */
    app: app.app,
    /** The running relay: `relay.dispatcher.tick()` attempts what is due and waits until idle. */
    relay: app.app.decorator.webhookRelay,
    /** Runs the retention purges now (the server runs them once a minute). */
    purge: () => app.app.retention.run(),
    async close() {
      await app.stop();
      upstream.stop();
      await deps.cleanup();
    },
  };
}
