import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { hourOf } from "../../src/store/hours.ts";
import { admin, tempDir } from "../support/harness.ts";
import { testBackend } from "../support/backend.ts";
import { launchBrowser, newContext, screenshot } from "../dashboard/browser.ts";
import { createAccount, operatorNumber, signInCookie, type TestAccount } from "../dashboard/support.ts";
import { receiver } from "../webhooks/support.ts";
import { consoleWorld, type ConsoleWorld, type TestOperator } from "./support.ts";
import { recordsCounting } from "../support/store-rows.ts";

// Issue 29 in Chromium, under the dashboard's CSP: an operator signs in, creates an account and its
// user, revokes a key, finds an unhealthy number and checks it again, downloads the month's usage
// CSV, and reads the audit entries of those changes on the Audit log page (a download changes
// nothing, so it has none). Each page is saved at 1280 and 390 px wide under test-artifacts/operator/.

const browser: Browser | null = await launchBrowser();
const shot = (page: Page, name: string) => screenshot(page, name, "operator");

const onSqlite = testBackend() === "sqlite";

describe.skipIf(browser === null)("the operator console in a browser", () => {
  let world: ConsoleWorld;
  let op: TestOperator;
  let acme: TestAccount;
  let other: TestAccount;
  let keyId: string;
  let globexId: string;

  beforeAll(async () => {
    world = await consoleWorld();
    // Well into the month, so that its usage has days.
    world.deps.clock.set(Date.UTC(2026, 0, 20, 10, 30));
    world.upstream.numbers.set("1001", { display: "+1 555 0101", name: "Acme Sales" });
    world.upstream.numbers.set("1002", { level: "HIGH", display: "+1 555 0102", name: "Acme Support" });
    world.upstream.numbers.set("2001", { display: "+44 20 7946 0001", name: "Other Ltd" });
    acme = await createAccount(world.url, "Acme Trading Company International");
    other = await createAccount(world.url, "Other Ltd");
    await operatorNumber(world.url, acme.id, "waba-acme", "1001");
    await operatorNumber(world.url, acme.id, "waba-acme", "1002");
    await operatorNumber(world.url, other.id, "102290129340398", "2001");
    const key = await admin(world.url, "POST", `/admin/accounts/${acme.id}/api-keys`, {
      mode: "live",
      name: "billing server",
    });
    keyId = ((await key.json()) as { id: string }).id;
    await admin(world.url, "POST", `/admin/accounts/${acme.id}/api-keys`, { mode: "test", name: "staging" });

    // Other's WABA token is refused upstream when the number is checked: WABA token revoked, cause 190.
    world.upstream.tokens.delete("good-token");
    expect((await admin(world.url, "POST", "/admin/numbers/2001/sync")).status).toBe(200);
    world.upstream.tokens.add("good-token");

    // Acme's calls this month and one endpoint of theirs that answered 410 Gone (disabled).
    // Usage is counted by the hour (each count's hour is the start of one).
    const now = hourOf(world.deps.clock.now());
    const calls = (hour: number, kind: "forwarded" | "upstream_error" | "refused", label: string, count: number) => ({
      accountId: acme.id,
      targetId: "1001",
      hour,
      kind,
      label,
      count,
    });
    const day = 24 * 3_600_000;
    await world.deps.store.requests.append(
      recordsCounting([
        calls(now - 25 * day, "forwarded", "POST /{phone_number_id}/messages", 999),
        calls(now - 2 * day, "forwarded", "POST /{phone_number_id}/messages", 1200),
        calls(now - day, "forwarded", "POST /{phone_number_id}/messages", 2400),
        calls(now - day, "upstream_error", "131026", 48),
        calls(now - 3_600_000, "forwarded", "POST /{phone_number_id}/messages", 180),
        calls(now - 3_600_000, "upstream_error", "131026", 6),
        calls(now, "refused", "1006", 12),
      ]),
    );
    const gone = receiver(() => new Response("gone", { status: 410 }));
    try {
      const user = await signInCookie(world.url, acme);
      const api = async (path: string, body: unknown) =>
        (await (
          await fetch(`${world.url}${path}`, {
            method: "POST",
            headers: { cookie: user, origin: world.url, "content-type": "application/json" },
            body: JSON.stringify(body),
          })
        ).json()) as { id: string };
      const endpoint = await api("/api/endpoints", { url: `${gone.url}/acme-orders-webhook`, fields: ["messages"] });
      await api(`/api/endpoints/${endpoint.id}/test`, {});
      await world.relay.dispatcher.tick();
    } finally {
      gone.stop();
    }
    // A backup an hour ago, for the overview's last one (the scale-out mode's are PostgreSQL's own tools').
    if (onSqlite) {
      world.deps.clock.advance(-3_600_000);
      expect((await admin(world.url, "POST", "/admin/backups")).status).toBe(201);
      world.deps.clock.advance(3_600_000);
    }
    op = await world.operator("ops@service.example", "operator password 1");
  });
  afterAll(async () => {
    await browser?.close();
    await world.close();
  });

  async function signIn(page: Page, path = "/operator") {
    await page.goto(path);
    expect(new URL(page.url()).pathname).toBe("/operator/sign-in");
    await page.getByLabel("Email").fill(op.email);
    await page.getByLabel("Password").fill(op.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === path);
  }

  test("sign in, read the overview, create an account and its user, revoke a key", async () => {
    const { context, page, problems } = await newContext(browser!, world.url);
    await page.goto("/operator");
    await shot(page, "sign-in");
    await signIn(page);
    const cookie = (await context.cookies()).find((c) => c.name === "sb_operator");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    expect((await context.cookies()).some((c) => c.name === "sb_session")).toBe(false);

    const overview = (await page.locator("main").textContent()) ?? "";
    expect(overview).toContain("Calls per minute");
    expect(overview).toContain("WABA token revoked");
    expect(overview).toContain("acme-orders-webhook");
    expect(overview).toContain("Disabled: the receiver answered 410 Gone.");
    expect(overview).toContain(onSqlite ? "Last backup1 h ago" : "BackupsNot taken here");
    await shot(page, "overview");

    // A minute between changes, so the Audit log reads them in order.
    world.deps.clock.advance(60_000);
    await page.getByRole("link", { name: "Accounts" }).click();
    await page.waitForURL("**/operator/accounts");
    await page.getByLabel("Name").fill("Globex");
    await page.getByLabel("Contact email").fill("billing@globex.example");
    await page.getByLabel("Billing status").selectOption("overdue");
    await page.getByLabel("First user's email").fill("hank@globex.example");
    await page.getByLabel("First user's password").fill("hank password 1");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/operator/accounts/acc_*?done=created");
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("first user are created");
    await expect(page.locator("main").textContent()).resolves.toContain("hank@globex.example");
    const globex = world.deps.store.directory.accounts().find((a) => a.name === "Globex");
    expect(globex?.billingStatus).toBe("overdue");
    globexId = globex?.id ?? "";
    expect((await world.deps.store.users.ofAccount(globex?.id ?? "")).map((u) => u.email)).toEqual([
      "hank@globex.example",
    ]);

    await page.goto("/operator/accounts");
    await page.getByLabel("Search").fill("acme");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL("**/operator/accounts?q=acme");
    await expect(page.getByRole("row").count()).resolves.toBe(2);
    await page.goto("/operator/accounts");
    await shot(page, "accounts");

    await page.getByRole("link", { name: "Acme Trading Company International" }).click();
    await page.waitForURL(`**/operator/accounts/${acme.id}`);
    world.deps.clock.advance(60_000);
    const row = page.getByRole("row", { name: /billing server/ });
    page.once("dialog", (dialog) => void dialog.accept());
    await row.getByRole("button", { name: /Revoke/ }).click();
    await page.waitForURL(`**/operator/accounts/${acme.id}?revoked=${keyId}`);
    await expect(page.getByRole("row", { name: /billing server/ }).textContent()).resolves.toContain("Revoked");
    expect(world.deps.store.directory.apiKey(keyId)?.revokedAt).not.toBeNull();
    await shot(page, "account");
    expect(problems).toEqual([]);
    await context.close();
  });

  test("find an unhealthy number and check it again; download the month's usage CSV", async () => {
    const { context, page, problems } = await newContext(browser!, world.url);
    await signIn(page, "/operator/numbers");
    await page.getByLabel("State").selectOption("unusable");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL("**/operator/numbers?state=unusable**");
    const row = page.getByRole("row", { name: /Other Ltd/ });
    await expect(row.textContent()).resolves.toContain("WABA token revoked");
    await expect(row.textContent()).resolves.toContain("The platform answered error 190");
    await expect(page.getByRole("row").count()).resolves.toBe(2);
    await shot(page, "numbers");
    world.deps.clock.advance(60_000);
    await row.getByRole("button", { name: "Check again +44 20 7946 0001" }).click();
    await page.waitForURL("**/operator/numbers?checked=2001");
    await expect(page.getByRole("status").first().textContent()).resolves.toContain(
      "Checked +44 20 7946 0001: Connected.",
    );
    expect(world.deps.store.directory.waba("102290129340398")?.status).toBe("connected");

    await page.getByRole("link", { name: "Usage" }).click();
    await page.waitForURL("**/operator/usage");
    await expect(page.locator("main").textContent()).resolves.toContain("2,400");
    await shot(page, "usage");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("switchboard-usage-2026-01-01-to-2026-01-20.csv");
    const dir = tempDir();
    try {
      const file = join(dir.path, "usage.csv");
      await download.saveAs(file);
      const lines = readFileSync(file, "utf8").trim().split("\r\n");
      expect(lines[0]).toBe("account_id,account_name,target_id,day,kind,label,count");
      // This month's days only (December's 999 calls are not in it).
      const row = (day: string, kind: string, label: string, count: number) =>
        `${acme.id},Acme Trading Company International,1001,${day},${kind},${label},${count}`;
      const send = "POST /{phone_number_id}/messages";
      expect(lines.slice(1)).toEqual([
        row("2026-01-18", "forwarded", send, 1200),
        row("2026-01-19", "forwarded", send, 2400),
        row("2026-01-19", "upstream_error", "131026", 48),
        row("2026-01-20", "forwarded", send, 180),
        row("2026-01-20", "refused", "1006", 12),
        row("2026-01-20", "upstream_error", "131026", 6),
      ]);
    } finally {
      dir.cleanup();
    }

    expect(problems).toEqual([]);
    await context.close();
  });

  test("read the audit entries of those changes, filtered by account and action; sign out", async () => {
    const { context, page, problems } = await newContext(browser!, world.url);
    await signIn(page, "/operator/audit");
    const list = page.locator("main tbody");
    const entry = (what: RegExp | string) => page.getByRole("row").filter({ hasText: what });
    const who = `Operator ${op.email}`;
    // Newest first: the check, the revocation, the user and the account, each the operator's, from their address.
    for (const what of [
      "Checked a number again",
      "Revoked an API key",
      "Added a dashboard user",
      "Created the account",
    ])
      await expect(entry(what).filter({ hasText: who }).count()).resolves.toBeGreaterThan(0);
    await expect(entry("Created the account").filter({ hasText: "Globex" }).textContent()).resolves.toContain(
      "billing_status: none → overdue",
    );
    await expect(entry("Added a dashboard user").filter({ hasText: "Globex" }).textContent()).resolves.toContain(
      "email: none → hank@globex.example",
    );
    await expect(entry("Revoked an API key").textContent()).resolves.toContain(`api_key ${keyId}`);
    await expect(entry("Checked a number again").filter({ hasText: who }).textContent()).resolves.toContain(
      "number 2001",
    );
    await expect(
      entry(/Signed in/)
        .first()
        .textContent(),
    ).resolves.toContain("127.0.0.1");
    await expect(list.textContent()).resolves.not.toContain("hank password 1");
    await shot(page, "audit");

    await page.getByLabel("Account").selectOption(globexId);
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(`**/operator/audit?account_id=${globexId}**`);
    await expect(page.getByRole("row").count()).resolves.toBe(3);
    await page.getByLabel("What").selectOption("user.create");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL("**/operator/audit?**action=user.create**");
    await expect(page.getByRole("row").count()).resolves.toBe(2);
    await shot(page, "audit-filtered");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL("**/operator/sign-in?signed_out=1");
    await page.goto("/operator/audit");
    expect(new URL(page.url()).pathname).toBe("/operator/sign-in");
    expect(problems).toEqual([]);
    await context.close();
  });
});
