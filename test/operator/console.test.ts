import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { escapeHtml } from "@kitajs/html";
import { accountRows } from "../../src/console/reports.ts";
import { testBackend } from "../support/backend.ts";
import { admin } from "../support/harness.ts";
import { createAccount, operatorNumber, signInCookie, type TestAccount } from "../dashboard/support.ts";
import { eventBody, messageChange, postUpstream, receiver } from "../webhooks/support.ts";
import { consoleWorld, type ConsoleWorld } from "./support.ts";
import { recordsCounting } from "../support/store-rows.ts";

// Issue 29: the console's pages over real HTTP, on either backend. Every change goes through the
// operator API's operations. (That an object of one account under another's path answers as no
// object, for every such route, is test/isolation/cross-account.test.ts's.)

let world: ConsoleWorld;
let cookie: string;
let acme: TestAccount;
let other: TestAccount;
const keys: Record<string, string> = {};

const HOUR = 3_600_000;

async function apiKey(accountId: string, name: string): Promise<string> {
  const r = await admin(world.url, "POST", `/admin/accounts/${accountId}/api-keys`, { mode: "live", name });
  return ((await r.json()) as { id: string }).id;
}

beforeAll(async () => {
  world = await consoleWorld();
  world.upstream.numbers.set("1001", { display: "+1 555 0101", name: "Acme Sales" });
  world.upstream.numbers.set("1002", { display: "+1 555 0102", name: "Acme Support" });
  world.upstream.numbers.set("2001", { display: "+44 20 7946 0001", name: "Other Ltd" });
  acme = await createAccount(world.url, "Acme");
  other = await createAccount(world.url, "Other");
  await operatorNumber(world.url, acme.id, "waba-acme", "1001");
  await operatorNumber(world.url, acme.id, "waba-acme", "1002");
  await operatorNumber(world.url, other.id, "waba-other", "2001");
  keys.acme = await apiKey(acme.id, "acme server");
  keys.other = await apiKey(other.id, "other server");
  cookie = (await world.operator()).cookie;
});
afterAll(() => world.close());

const text = async (r: Response) => r.text();
const path = (account: TestAccount) => `/operator/accounts/${account.id}`;

describe("accounts", () => {
  test("listed by name with billing status, numbers, active keys and this month's calls; searched by a part of name, email or id", async () => {
    const now = world.deps.clock.now();
    await world.deps.store.requests.append(
      recordsCounting([
        {
          accountId: acme.id,
          targetId: "1001",
          hour: now,
          kind: "forwarded",
          label: "POST /{phone_number_id}/messages",
          count: 40,
        },
        { accountId: acme.id, targetId: "1001", hour: now, kind: "refused", label: "1006", count: 2 },
        // Last month's calls are not this month's.
        {
          accountId: acme.id,
          targetId: "1001",
          hour: now - HOUR,
          kind: "forwarded",
          label: "POST /{phone_number_id}/messages",
          count: 1000,
        },
      ]),
    );
    await admin(world.url, "PATCH", "/admin/wabas/waba-other", { status: "disconnected" });
    const rows = await accountRows(world.deps, "");
    const acmeRow = rows.find((r) => r.account.id === acme.id);
    expect(acmeRow).toMatchObject({ numbers: 2, unusableNumbers: 0, activeKeys: 1, callsThisMonth: 42 });
    expect(rows.find((r) => r.account.id === other.id)).toMatchObject({
      numbers: 1,
      unusableNumbers: 1,
      callsThisMonth: 0,
    });
    expect((await accountRows(world.deps, "ACM")).map((r) => r.account.id)).toEqual([acme.id]);
    expect((await accountRows(world.deps, other.id.slice(-6))).map((r) => r.account.id)).toEqual([other.id]);
    expect((await accountRows(world.deps, "other@")).map((r) => r.account.id)).toEqual([other.id]);

    const page = await text(await world.get(cookie, "/operator/accounts?q=acme"));
    expect(page).toContain("Acme");
    expect(page).not.toContain(other.id);
    expect(page).toContain("42");
    await admin(world.url, "PATCH", "/admin/wabas/waba-other", { status: "connected" });
  });

  test("create an account and its first user: refused input creates nothing; a taken login email creates nothing", async () => {
    const count = () => world.deps.store.directory.accounts().length;
    const before = count();
    const form = {
      name: "Globex <b>",
      email: "billing@globex.example",
      billing_status: "overdue",
      retention: "7d",
      user_email: "hank@globex.example",
      // Spaces around a password are part of it, as the JSON API takes it.
      user_password: "  hank password 1 ",
    };
    const bad = await world.post(cookie, "/operator/accounts", { ...form, user_password: "short", email: "nope" });
    expect(bad.status).toBe(400);
    const badPage = await text(bad);
    expect(badPage).toContain("At least 10 characters.");
    expect(badPage).not.toContain("short");
    const taken = await world.post(cookie, "/operator/accounts", { ...form, user_email: acme.email });
    expect(taken.status).toBe(409);
    expect(await text(taken)).toContain(`A dashboard user with email ${acme.email} already exists.`);
    expect(count()).toBe(before);

    const ok = await world.post(cookie, "/operator/accounts", form);
    expect(ok.status).toBe(303);
    const location = ok.headers.get("location") ?? "";
    expect(location).toMatch(/^\/operator\/accounts\/acc_[0-9a-z]{16}\?done=created$/);
    const id = location.split("/")[3]?.split("?")[0] ?? "";
    expect(world.deps.store.directory.account(id)).toMatchObject({
      name: "Globex <b>",
      billingStatus: "overdue",
      retention: "7d",
    });
    const page = await text(await world.get(cookie, location));
    expect(page).toContain("The account and its first user are created.");
    expect(page).toContain(escapeHtml("Globex <b>"));
    expect(page).not.toContain("Globex <b>");
    // The person can sign in to the dashboard, with the password as typed.
    expect(
      await signInCookie(world.url, { id, email: "hank@globex.example", password: "  hank password 1 " }),
    ).toStartWith("sb_session=");
  });

  test("billing status and users are changed through the operator API's rules; an unknown account is 404", async () => {
    const billing = await world.post(cookie, `${path(acme)}/billing`, { billing_status: "suspended" });
    expect(billing.status).toBe(303);
    expect(billing.headers.get("location")).toBe(`${path(acme)}?done=billing`);
    expect(world.deps.store.directory.account(acme.id)?.billingStatus).toBe("suspended");
    expect((await world.post(cookie, `${path(acme)}/billing`, { billing_status: "gold" })).status).toBe(400);
    expect((await world.post(cookie, `${path(acme)}/billing`, {})).status).toBe(400);
    expect(world.deps.store.directory.account(acme.id)?.billingStatus).toBe("suspended");
    await world.post(cookie, `${path(acme)}/billing`, { billing_status: "active" });

    const added = await world.post(cookie, `${path(acme)}/users`, {
      email: "second@acme.example",
      password: "second user pw",
    });
    expect(added.status).toBe(303);
    // Both made at the clock's one instant: in no particular order.
    expect((await world.deps.store.users.ofAccount(acme.id)).map((u) => u.email).sort()).toEqual([
      acme.email,
      "second@acme.example",
    ]);
    const dup = await world.post(cookie, `${path(acme)}/users`, {
      email: "second@acme.example",
      password: "second user pw",
    });
    expect(dup.status).toBe(409);
    const short = await world.post(cookie, `${path(acme)}/users`, { email: "third@acme.example", password: "x" });
    expect(short.status).toBe(400);
    expect(await text(short)).toContain("At least 10 characters.");

    for (const r of [
      await world.get(cookie, "/operator/accounts/acc_nobody"),
      await world.post(cookie, "/operator/accounts/acc_nobody/billing", { billing_status: "active" }),
      await world.post(cookie, "/operator/accounts/acc_nobody/users", {
        email: "x@y.example",
        password: "long enough 1",
      }),
    ]) {
      expect(r.status).toBe(404);
      expect(await text(r)).toContain("No account acc_nobody.");
    }
  });

  test("the account page: users, keys, WABAs, numbers with their health in words, endpoints with state and 24-hour success", async () => {
    // Two endpoints of Acme's: one receiver takes a test event, the other answers 410 Gone (disabled at once).
    const ok = receiver();
    const gone = receiver(() => new Response("gone", { status: 410 }));
    try {
      const user = await signInCookie(world.url, acme);
      const api = async (method: string, url: string, body?: unknown) =>
        (await fetch(`${world.url}${url}`, {
          method,
          headers: { cookie: user, origin: world.url, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then((r) => r.json())) as { id: string };
      for (const r of [ok, gone]) {
        const endpoint = await api("POST", "/api/endpoints", { url: r.url, fields: ["messages"] });
        await api("POST", `/api/endpoints/${endpoint.id}/test`);
      }
      await world.relay.dispatcher.tick();
    } finally {
      ok.stop();
      gone.stop();
    }
    const page = await text(await world.get(cookie, path(acme)));
    for (const part of [
      acme.email,
      "acme server",
      "waba-acme",
      "Acme Sales",
      "+1 555 0102",
      "Connected",
      "Check again",
      '100.0 %</strong> <span class="small muted">of 1 attempt<',
      '0.0 %</strong> <span class="small muted">of 1 attempt<',
      "Disabled (410 Gone)",
    ])
      expect(page).toContain(part);
    expect(page).not.toContain(other.email);
    // The overview lists the disabled endpoint, with why.
    const overview = await text(await world.get(cookie, "/operator"));
    expect(overview).toContain(escapeHtml(gone.url));
    expect(overview).toContain("Disabled: the receiver answered 410 Gone.");
  });
});

describe("keys and numbers", () => {
  test("revoke a key of the account; another account's key under its path is 404 as an unknown one and stays active", async () => {
    const revoke = (account: TestAccount, key: string) => world.post(cookie, `${path(account)}/api-keys/${key}/revoke`);
    const theirs = await revoke(acme, keys.other ?? "");
    const unknown = await revoke(acme, "key_nobodynobody00");
    expect(theirs.status).toBe(404);
    expect((await text(theirs)).replaceAll(keys.other ?? "", "<id>")).toBe(
      (await text(unknown)).replaceAll("key_nobodynobody00", "<id>"),
    );
    expect(world.deps.store.directory.apiKey(keys.other ?? "")?.revokedAt).toBeNull();

    const mine = await revoke(acme, keys.acme ?? "");
    expect(mine.status).toBe(303);
    expect(mine.headers.get("location")).toBe(`${path(acme)}?revoked=${keys.acme}`);
    expect(world.deps.store.directory.apiKey(keys.acme ?? "")?.revokedAt).toBe(world.deps.clock.now());
    expect(await text(await world.get(cookie, `${path(acme)}?revoked=${keys.acme}`))).toContain("is revoked.");
  });

  test("numbers across accounts by state and cause, in the dashboard's words; Check again restores a number upstream serves", async () => {
    // One WABA's token is refused upstream when checked (cause 190); one number is set restricted by hand.
    await admin(world.url, "PATCH", "/admin/numbers/1002", { status: "restricted" });
    world.upstream.tokens.delete("good-token");
    const failed = await world.post(cookie, `${path(acme)}/numbers/1001/check`, { back: "numbers" });
    expect(failed.status).toBe(303);
    expect(failed.headers.get("location")).toBe("/operator/numbers?checked=1001");
    expect(world.deps.store.directory.waba("waba-acme")).toMatchObject({ status: "token_revoked", causeCode: 190 });
    expect(await text(await world.get(cookie, "/operator/numbers?checked=1001"))).toContain("The check of");

    const ids = async (query: string) => {
      const page = await text(await world.get(cookie, `/operator/numbers${query}`));
      return ["1001", "1002", "2001"].filter((id) => page.includes(`id <span>${id}</span>`));
    };
    expect(await ids("")).toEqual(["1001", "1002", "2001"]);
    expect(await ids("?state=unusable")).toEqual(["1001", "1002"]);
    expect(await ids("?state=token_revoked")).toEqual(["1001", "1002"]);
    expect(await ids("?state=restricted")).toEqual([]);
    expect(await ids("?state=connected")).toEqual(["2001"]);
    expect(await ids("?cause=190")).toEqual(["1001", "1002"]);
    expect(await ids("?state=unusable&cause=none")).toEqual([]);
    const unusable = await text(await world.get(cookie, "/operator/numbers?state=token_revoked"));
    expect(unusable).toContain("WABA token revoked");
    expect(unusable).toContain("The platform answered error 190");
    expect((await world.get(cookie, "/operator/numbers?state=broken")).status).toBe(400);

    // The token works again: Check again reconnects the WABA; the number set by hand is then seen as restricted.
    world.upstream.tokens.add("good-token");
    const ok = await world.post(cookie, `${path(acme)}/numbers/1001/check`, { back: "account" });
    expect(ok.headers.get("location")).toBe(`${path(acme)}?checked=1001`);
    expect(world.deps.store.directory.waba("waba-acme")?.status).toBe("connected");
    expect(await text(await world.get(cookie, `${path(acme)}?checked=1001`))).toContain(
      "Checked <strong>+1 555 0101</strong>: <span>Connected</span>.",
    );
    expect(await ids("?state=unusable&cause=none")).toEqual(["1002"]);
    await world.post(cookie, `${path(acme)}/numbers/1002/check`);
    expect(world.deps.store.directory.number("1002")?.status).toBe("connected");
  });
});

describe("overview", () => {
  test("calls per minute and upstream error rate, webhooks, numbers not connected, storage and Redis", async () => {
    const now = world.deps.clock.now();
    await world.deps.store.requests.append(
      recordsCounting([
        {
          accountId: other.id,
          targetId: "2001",
          hour: now,
          kind: "forwarded",
          label: "GET /{phone_number_id}",
          count: 78,
        },
        { accountId: other.id, targetId: "2001", hour: now, kind: "upstream_error", label: "131031", count: 30 },
      ]),
    );
    await admin(world.url, "PATCH", "/admin/numbers/2001", { status: "flagged" });
    const page = await text(await world.get(cookie, "/operator"));
    // Counted since 23:00 UTC, the hour before the clock's (60 minutes): 40 + 1,000 + 78 forwarded, 30 upstream
    // errors and 2 refused (the first test's and these) are 19.2 a minute; 30 errors of 1,148 answered.
    expect(page).toContain('<span class="stat-value">19</span>');
    expect(page).toContain("2.6 %");
    expect(page).toContain("30 of the 1,148 answers upstream gave were errors");
    // The 24 hours since 00:00 UTC the day before: 1,150 calls in 1,440 minutes.
    expect(page).toContain('<span class="stat-value">0.8</span>');
    expect(page).toContain("Number flagged");
    expect(page).toContain("+44 20 7946 0001");
    expect(page).toContain(testBackend() === "postgres" ? "PostgreSQL" : "SQLite");
    expect(page).toContain(testBackend() === "postgres" ? "Redis (rate limits)" : "kept in this process");
    expect(page).not.toContain("Not answering");
    await admin(world.url, "PATCH", "/admin/numbers/2001", { status: "connected" });
  });

  test("events received count every event ingress accepted, those for no endpoint too, and say how many went nowhere", async () => {
    const hook = receiver();
    try {
      const user = await signInCookie(world.url, other);
      const created = await fetch(`${world.url}/api/endpoints`, {
        method: "POST",
        headers: { cookie: user, origin: world.url, "content-type": "application/json" },
        body: JSON.stringify({ url: hook.url, fields: ["messages"] }),
      });
      expect(created.status).toBe(201);
      const post = async (wabaId: string, field: string) =>
        expect(
          (await postUpstream(world.url, eventBody([{ id: wabaId, changes: [messageChange("2001", "hi", field)] }])))
            .status,
        ).toBe(200);
      await post("waba-other", "messages"); // to Other's endpoint
      await post("waba-other", "account_update"); // no endpoint takes this field
      await post("999000999", "messages"); // no WABA known
      await world.relay.events.flush();
      const page = await text(await world.get(cookie, "/operator"));
      expect(page).toContain(
        '<span class="stat-label">Events received, last hour</span><span class="stat-value">3</span>',
      );
      expect(page).toContain("2 for no endpoint (no WABA known, or no endpoint takes their fields)");
      expect(page).toContain(
        '<span class="stat-label">Events received, last 24 hours</span><span class="stat-value">3</span>',
      );
    } finally {
      hook.stop();
    }
  });

  test("the last backup: none yet, then the one an operator took (SQLite); none taken here on PostgreSQL", async () => {
    const backup = () =>
      fetch(`${world.url}/admin/backups`, { method: "POST", headers: { cookie, origin: world.url } });
    if (testBackend() === "postgres") {
      expect(await text(await world.get(cookie, "/operator"))).toContain("Not taken here");
      expect((await backup()).status).toBe(409);
      return;
    }
    const before = await text(await world.get(cookie, "/operator"));
    expect(before).toContain('<span class="stat-label">Last backup</span><span class="stat-value">None yet</span>');
    expect(before).toContain("by hand only (no BACKUP_SCHEDULE)");
    // An operator's session takes one through the operator API, as ADMIN_TOKEN does.
    const taken = await backup();
    expect(taken.status).toBe(201);
    world.deps.clock.advance(2 * HOUR);
    const after = await text(await world.get(cookie, "/operator"));
    expect(after).toContain('<span class="stat-label">Last backup</span><span class="stat-value">2 h ago</span>');
    expect(after).toContain("by hand only (no BACKUP_SCHEDULE)");
  });
});
