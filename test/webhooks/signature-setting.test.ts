import { describe, expect, test } from "bun:test";
import { BY_CLI } from "../../src/audit/entry.ts";
import { createOperator } from "../../src/operators/operations.ts";
import { allEntries } from "../audit/support.ts";
import { operatorCookie } from "../operator/support.ts";
import type { EndpointJson, ErrorEnvelope } from "../support/api-json.ts";
import { appWithAccount } from "./support.ts";

// The endpoint's `signature` setting (CONTRACT 4, docs/webhooks.md#signature-schemes): the API, the
// audit log, the dashboard's form and page, the console.

const shared = appWithAccount();
type Answer = EndpointJson & { signature: string; verify_token_set: boolean; secret?: string };

describe("the signature setting", () => {
  test("standard by default; platform when asked; read back, changed, never an unknown value", async () => {
    const { app, a } = shared;
    const rx = app.receiver();
    const plain = await a.api<Answer>("POST", "/api/endpoints", { url: rx.url, fields: ["messages"] });
    expect(plain.status).toBe(201);
    expect(plain.body.signature).toBe("standard");
    const bot = await a.api<Answer>("POST", "/api/endpoints", {
      url: rx.url,
      fields: ["messages"],
      signature: "platform",
      verify_token: "my verify token",
    });
    expect(bot.body).toMatchObject({ signature: "platform", verify_token_set: true });
    const read = await a.api<Answer>("GET", `/api/endpoints/${bot.body.id}`);
    expect(read.body).toMatchObject({ signature: "platform", verify_token_set: true });
    expect(JSON.stringify(read.body)).not.toContain("my verify token");
    const changed = await a.api<Answer>("PATCH", `/api/endpoints/${plain.body.id}`, { signature: "platform" });
    expect(changed.body.signature).toBe("platform");
    for (const signature of ["hub", "", 1, null]) {
      const bad = await a.api<ErrorEnvelope>("PATCH", `/api/endpoints/${plain.body.id}`, { signature });
      expect(bad.status).toBeGreaterThanOrEqual(400);
      expect(bad.status).toBeLessThan(500);
      expect(bad.body.error).toBeDefined();
    }
    expect((await a.api<Answer>("GET", `/api/endpoints/${plain.body.id}`)).body.signature).toBe("platform");
  });

  test("another account's endpoint: 404, and its setting is unchanged", async () => {
    const { app, a } = shared;
    const other = await app.account();
    const theirs = await other.endpoint(app.receiver().url);
    const r = await a.api<ErrorEnvelope>("PATCH", `/api/endpoints/${theirs.id}`, { signature: "platform" });
    expect(r.status).toBe(404);
    expect((await other.api<Answer>("GET", `/api/endpoints/${theirs.id}`)).body.signature).toBe("standard");
  });

  test("its change is an audit entry; the verify token is never shown in one", async () => {
    const { app, a } = shared;
    const ep = await a.endpoint(app.receiver().url);
    await a.api("PATCH", `/api/endpoints/${ep.id}`, { signature: "platform", verify_token: "tok-secret-1" });
    const [entry] = await allEntries(app.url, { object_id: ep.id, action: "endpoint.update" });
    expect(entry?.changes).toEqual({
      signature: ["standard", "platform"],
      verify_token: [null, "[secret changed]"],
    });
    expect(JSON.stringify(await allEntries(app.url))).not.toContain("tok-secret-1");
  });

  test("the dashboard's form sets it, and the new endpoint's page says to use the secret as the app secret", async () => {
    const { app, a } = shared;
    const form = await a.page("/dashboard/endpoints/new");
    expect(form).toContain('name="signature" value="platform"');
    expect(form).toContain("X-Hub-Signature-256");
    const rx = app.receiver();
    const posted = await fetch(`${app.url}/dashboard/endpoints`, {
      method: "POST",
      headers: {
        cookie: a.sessionCookie(),
        origin: app.url,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ url: rx.url, fields: "messages", signature: "platform" }).toString(),
      redirect: "manual",
    });
    const html = await posted.text();
    expect(posted.status).toBe(201);
    expect(html).toContain("Use this as your bot's app secret");
    expect(html).toMatch(/<input type="text" id="signing-secret" value="whsec_/);
    const list = (await a.api<{ data: Answer[] }>("GET", "/api/endpoints")).body.data;
    expect(list.find((e) => e.url === rx.url)?.signature).toBe("platform");
  });

  test("the console's account page shows a platform-signed endpoint as such", async () => {
    const { app, a } = shared;
    const op = { email: "ops-sig@ops.example", password: "operator password 1" };
    await createOperator(app.deps, op, BY_CLI);
    const cookie = await operatorCookie(app.url, op.email, op.password);
    const html = await (await fetch(`${app.url}/operator/accounts/${a.id}`, { headers: { cookie } })).text();
    expect(html).toContain("platform signature (X-Hub-Signature-256, one change per delivery)");
  });
});
