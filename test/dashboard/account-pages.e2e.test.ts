import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { randomId } from "../../src/runtime/random.ts";
import { admin } from "../support/harness.ts";
import { launchBrowser, newContext, screenshot } from "./browser.ts";
import { createAccount, dashboardWorld, operatorNumber, type TestAccount } from "./support.ts";

const browser: Browser | null = await launchBrowser();

async function signIn(page: Page, account: TestAccount, path = "/dashboard/numbers") {
  await page.goto(path);
  await expect(page.url()).toContain("/dashboard/sign-in");
  await page.getByLabel("Email").fill(account.email);
  await page.getByLabel("Password").fill(account.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === path);
}

describe.skipIf(browser === null)(
  "dashboard in a browser: sign-in, numbers, keys, settings, notifications, activity",
  () => {
    let world: Awaited<ReturnType<typeof dashboardWorld>>;
    let acme: TestAccount;
    let other: TestAccount;

    beforeAll(async () => {
      world = await dashboardWorld();
      world.upstream.numbers.set("1001", { level: "STANDARD", display: "+1 555 0101", name: "Acme Sales" });
      world.upstream.numbers.set("1002", { level: "HIGH", display: "+1 555 0102", name: "Acme Support" });
      world.upstream.numbers.set("2001", { display: "+44 20 7946 0001", name: "Other Ltd" });
      acme = await createAccount(world.url, "Acme");
      other = await createAccount(world.url, "Other");
      await operatorNumber(world.url, acme.id, "waba-acme", "1001", "coexistence");
      await operatorNumber(world.url, other.id, "waba-other", "2001");
    });
    afterAll(async () => {
      await browser?.close();
      await world.close();
    });

    test("sign-in refuses a wrong password in words, then signs in by keyboard and signs out", async () => {
      const { context, page, problems } = await newContext(browser!, world.url);
      await page.goto("/dashboard/api-keys");
      expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
      await screenshot(page, "sign-in");
      await page.getByLabel("Email").fill(acme.email);
      await page.getByLabel("Password").fill("wrong password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page.getByRole("alert").textContent()).resolves.toContain("Wrong email or password.");
      // Keyboard only: the email keeps its value, Tab to the password, Enter submits.
      await page.getByLabel("Email").focus();
      await page.keyboard.press("Tab");
      await page.keyboard.type(acme.password);
      await page.keyboard.press("Enter");
      await page.waitForURL("**/dashboard/api-keys");
      const cookie = (await context.cookies()).find((c) => c.name === "sb_session")!;
      expect(cookie.httpOnly).toBe(true);
      expect(cookie.sameSite).toBe("Strict");
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL("**/dashboard/sign-in?signed_out=1");
      await page.goto("/dashboard/numbers");
      expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
      expect(problems).toEqual([]);
      await context.close();
    });

    test("numbers: status in words, rate limits, connect a BYO number (bad token stores nothing), check again, revoked token", async () => {
      const { context, page, problems } = await newContext(browser!, world.url);
      await signIn(page, acme);
      const row = page.getByRole("row", { name: /Acme Sales/ });
      await expect(row.textContent()).resolves.toContain("Coexistence");
      await expect(row.textContent()).resolves.toContain("20 requests/s");
      await expect(row.textContent()).resolves.toContain("Connected");

      // A token the platform refuses: the error is shown in words and nothing is saved.
      await page.getByLabel("WABA id").fill("waba-byo");
      await page.getByLabel("Phone number id").fill("1002");
      await page.getByLabel("Access token").fill("bad-token");
      await page.getByLabel("App secret").fill("byo-app-secret");
      await page.getByRole("button", { name: "Connect number" }).click();
      await expect(page.getByRole("alert").textContent()).resolves.toContain("Invalid OAuth access token");
      expect(world.deps.store.directory.waba("waba-byo")).toBeUndefined();
      expect(await page.getByLabel("WABA id").inputValue()).toBe("waba-byo");

      await page.getByLabel("Access token").fill("good-token");
      await page.getByLabel("App secret").fill("byo-app-secret");
      await page.getByRole("button", { name: "Connect number" }).click();
      await page.waitForURL("**/dashboard/numbers?done=connected**");
      const byo = page.getByRole("row", { name: /Acme Support/ });
      await expect(byo.textContent()).resolves.toContain("Bring your own");
      await expect(byo.textContent()).resolves.toContain("HIGH");
      await expect(byo.textContent()).resolves.toContain("1,000 requests/s");
      expect(world.deps.store.directory.waba("waba-byo")?.appSecret).toBe("byo-app-secret");

      // Upstream lowers the level; Check again reads it again.
      world.upstream.numbers.set("1002", { level: "STANDARD", display: "+1 555 0102", name: "Acme Support" });
      await page.getByRole("button", { name: "Check again +1 555 0102" }).click();
      await page.waitForURL("**/dashboard/numbers?done=synced**");
      await expect(page.getByRole("status").first().textContent()).resolves.toContain("throughput level STANDARD");
      await expect(page.getByRole("row", { name: /Acme Support/ }).textContent()).resolves.toContain("80 requests/s");

      // The operator marks the WABA's token revoked: the page says so and what to do.
      expect((await admin(world.url, "PATCH", "/admin/wabas/waba-byo", { status: "token_revoked" })).status).toBe(200);
      await page.reload();
      const revoked = await page.getByRole("row", { name: /Acme Support/ }).textContent();
      expect(revoked).toContain("WABA token revoked");
      expect(revoked).toContain("connect the number again with a new access token");
      await screenshot(page, "numbers");

      // Reconnecting with a fresh token clears it.
      await page.getByLabel("WABA id").fill("waba-byo");
      await page.getByLabel("Phone number id").fill("1002");
      await page.getByLabel("Access token").fill("good-token");
      await page.getByLabel("App secret").fill("byo-app-secret");
      await page.getByRole("button", { name: "Connect number" }).click();
      await page.waitForURL("**/dashboard/numbers?done=connected**");
      await expect(page.getByRole("row", { name: /Acme Support/ }).textContent()).resolves.not.toContain("revoked");
      expect(problems).toEqual([]);
      await context.close();
    });

    test("API keys: a new key is shown once with a copy button, listed by prefix, and revoked after a confirmation", async () => {
      const { context, page, problems } = await newContext(browser!, world.url);
      await signIn(page, acme, "/dashboard/api-keys");
      await page.getByLabel("Test").check();
      await page.getByLabel(/^Name/).fill("staging <b>bot</b>");
      await page.getByRole("button", { name: "Create key" }).click();
      const shown = await page.getByLabel(/New test key/).inputValue();
      expect(shown).toMatch(/^px_test_[A-Za-z0-9_-]{32}$/);
      await page.getByRole("button", { name: "Copy" }).click();
      await page.getByRole("button", { name: "Copied" }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown);
      // The name is text, never markup.
      await expect(page.locator("td b").count()).resolves.toBe(0);
      await screenshot(page, "api-keys");

      await page.goto("/dashboard/api-keys");
      expect(await page.content()).not.toContain(shown);
      const row = page.getByRole("row", { name: /staging/ });
      await expect(row.textContent()).resolves.toContain(shown.slice(0, 12));
      await expect(row.textContent()).resolves.toContain("2026-01-01 00:00:00 UTC");

      page.once("dialog", (dialog) => void dialog.dismiss());
      await row.getByRole("button", { name: /Revoke/ }).click();
      await expect(row.textContent()).resolves.toContain("Active");
      page.once("dialog", (dialog) => void dialog.accept());
      await row.getByRole("button", { name: /Revoke/ }).click();
      await page.waitForURL("**/dashboard/api-keys?revoked=**");
      await expect(page.getByRole("row", { name: /staging/ }).textContent()).resolves.toContain("Revoked");
      const keyRecord = world.deps.store.directory.apiKeys(acme.id).find((k) => k.name === "staging <b>bot</b>")!;
      expect(keyRecord.revokedAt).not.toBeNull();
      expect(problems).toEqual([]);
      await context.close();
    });

    test("settings: retention switches to 7 days; notifications list the account's warnings", async () => {
      await world.deps.store.notifications.add({
        id: randomId(world.deps.random, "ntf"),
        accountId: acme.id,
        kind: "endpoint_warning",
        subject: "Endpoint https://hooks.acme.test/wh is failing",
        body: "20 deliveries in a row failed.\nLast error: connection refused.",
        emailedAt: null,
        createdAt: world.deps.clock.now(),
      });
      const { context, page, problems } = await newContext(browser!, world.url);
      await signIn(page, acme, "/dashboard/settings");
      expect(await page.getByLabel("24 hours").isChecked()).toBe(true);
      await page.getByLabel("7 days").check();
      await page.getByRole("button", { name: "Save" }).click();
      await page.waitForURL("**/dashboard/settings?saved=1");
      expect(await page.getByLabel("7 days").isChecked()).toBe(true);
      expect(world.deps.store.directory.account(acme.id)?.retention).toBe("7d");
      await screenshot(page, "settings");

      await page.getByRole("link", { name: "Notifications" }).click();
      await page.waitForURL("**/dashboard/notifications");
      await expect(page.getByRole("heading", { name: /is failing/ }).count()).resolves.toBe(1);
      await expect(page.textContent("main")).resolves.toContain("Last error: connection refused.");
      await screenshot(page, "notifications");

      // The account's audit log: the change just made, by this user, before → after.
      await page.getByRole("link", { name: "Activity" }).click();
      await page.waitForURL("**/dashboard/activity");
      const change = page.getByRole("row", { name: /Changed the settings/ });
      await expect(change.textContent()).resolves.toContain("retention: 24h → 7d");
      await expect(change.textContent()).resolves.toContain(acme.email);
      await page.getByLabel("What").selectOption({ label: "Signed in" });
      await page.getByRole("button", { name: "Filter" }).click();
      await page.waitForURL((url) => url.searchParams.get("action") === "session.create");
      await expect(page.getByRole("row", { name: /Changed the settings/ }).count()).resolves.toBe(0);
      await expect(page.getByRole("row", { name: /Signed in/ }).count()).resolves.toBeGreaterThan(0);
      await screenshot(page, "activity");
      expect(problems).toEqual([]);
      await context.close();
    });

    test("another account sees none of this account's numbers, keys or notifications, and cannot act on them", async () => {
      const { context, page } = await newContext(browser!, world.url);
      await signIn(page, other);
      const numbers = await page.textContent("main");
      expect(numbers).toContain("Other Ltd");
      expect(numbers).not.toContain("Acme");
      await page.goto("/dashboard/api-keys");
      expect(await page.textContent("main")).not.toContain("staging");
      await page.goto("/dashboard/notifications");
      expect(await page.textContent("main")).not.toContain("is failing");
      // Acting on Acme's ids answers "not found", as if they did not exist.
      const acmeKey = world.deps.store.directory.apiKeys(acme.id)[0]!;
      const revoke = await page.request.post(`/dashboard/api-keys/${acmeKey.id}/revoke`, {
        headers: { origin: world.url },
      });
      expect(revoke.status()).toBe(404);
      const sync = await page.request.post("/dashboard/numbers/1001/sync", { headers: { origin: world.url } });
      expect(sync.status()).toBe(404);
      await context.close();
    });
  },
);
