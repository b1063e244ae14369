import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { eventually } from "../support/eventually.ts";
import { admin } from "../support/harness.ts";
import { receiver, type Receiver } from "../webhooks/support.ts";
import { signupWorld, type SignupWorld } from "../onboarding/support.ts";
import { launchBrowser, newContext, screenshot } from "./browser.ts";

// Issue 20 in Chromium: "Connect with the platform" through the simulator's stand-in for the
// platform's SDK and popup, a failed step and its resumption, and a coexistence number whose
// history sync waits for the pre-flight, then reaches the endpoint.

const browser: Browser | null = await launchBrowser();

describe.skipIf(browser === null)("onboarding in a browser: Embedded Signup and coexistence syncs", () => {
  let t: SignupWorld;
  const hooks: Receiver[] = [];
  beforeAll(async () => {
    t = await signupWorld();
  });
  afterAll(async () => {
    await browser?.close();
    for (const h of hooks) h.stop();
    await t.stop();
  });

  async function signedIn(account: { email: string; password: string }) {
    const session = await newContext(browser!, t.url);
    const { page } = session;
    await page.goto("/dashboard/numbers");
    await page.getByLabel("Email").fill(account.email);
    await page.getByLabel("Password").fill(account.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/numbers");
    return session;
  }

  /** Clicks "Connect with the platform" and finishes the popup with these ids. */
  async function signUpInPopup(page: Page, ids: { wabaId: string; phoneNumberId: string }) {
    const connect = page.getByRole("button", { name: "Connect with the platform" });
    await expect(connect.isEnabled({ timeout: 10_000 })).resolves.toBe(true);
    await page.waitForFunction(() => !(document.querySelector("[data-signup-start]") as HTMLButtonElement).disabled);
    const [popup] = await Promise.all([page.waitForEvent("popup"), connect.click()]);
    await popup.waitForLoadState();
    await popup.getByLabel("WABA id").fill(ids.wabaId);
    await popup.getByLabel("Phone number id").fill(ids.phoneNumberId);
    await Promise.all([
      page.waitForURL("**/dashboard/numbers/signups/**"),
      popup.getByRole("button", { name: "Finish" }).click(),
    ]);
  }

  test("the PIN, the platform's popup, each step on the page; a failure at each step in words, Try again resumes, and the number connects", async () => {
    const acme = await t.account();
    const { context, page, problems } = await signedIn(acme);
    const csp = (await page.request.get("/dashboard/numbers")).headers()["content-security-policy"]!;
    expect(csp).toContain(`script-src 'self' ${new URL(t.sim.url).origin}`);
    await screenshot(page, "numbers-signup");

    // Without a PIN the popup does not open: the code would expire while the user looks for one.
    await page.waitForFunction(() => !(document.querySelector("[data-signup-start]") as HTMLButtonElement).disabled);
    await page.getByRole("button", { name: "Connect with the platform" }).click();
    await expect(page.getByRole("status").filter({ hasText: "PIN" }).textContent()).resolves.toContain(
      "Choose a 6-digit PIN first.",
    );

    // Each server step fails once, in turn; each "Try again" resumes at the step that failed.
    const plan = (max: number | null) => admin(t.url, "PATCH", `/admin/accounts/${acme.id}`, { max_numbers: max });
    const failures = [
      {
        step: "exchange",
        arm: () => t.sim.fault("oauth", { error: 100, message: "Temporary OAuth failure." }, 1),
        says: "Temporary OAuth failure.",
      },
      {
        step: "subscribe",
        arm: () => t.sim.fault("POST 880000000", { error: 190 }, 1),
        says: "Error validating access token",
      },
      {
        step: "register",
        arm: () => t.sim.fault("POST 880000001", { error: 131031 }, 1),
        says: "Business account has been locked.",
      },
      { step: "sync", arm: () => t.sim.fault("GET 880000001", { error: 133010 }, 1), says: "Account not registered." },
      { step: "save", arm: () => plan(0), says: "The account's plan allows 0 number(s)." },
    ];
    await page.getByLabel("PIN").fill("424242");
    for (const [i, failure] of failures.entries()) {
      await failure.arm();
      if (i === 0) await signUpInPopup(page, { wabaId: "880000000", phoneNumberId: "880000001" });
      else {
        await page.getByRole("button", { name: "Try again" }).click();
        await page.waitForLoadState();
      }
      const step = page.locator(`[data-step="${failure.step}"]`);
      await expect(step.textContent()).resolves.toContain("Failed");
      await expect(step.textContent()).resolves.toContain(failure.says);
      for (const before of failures.slice(0, i))
        await expect(page.locator(`[data-step="${before.step}"]`).textContent()).resolves.toContain("Done");
      if (failure.step === "register") await screenshot(page, "signup-failed");
      if (i === 0) {
        // Left and come back later: the Numbers page lists the unfinished signup and leads back to it.
        await page.goto("/dashboard/numbers");
        const unfinished = page.getByRole("region", { name: "Unfinished signups" });
        await expect(unfinished.textContent()).resolves.toContain("stopped at “Exchange the authorization code");
        await unfinished.getByRole("link", { name: "Continue" }).click();
        await page.waitForURL("**/dashboard/numbers/signups/**");
      }
    }
    await plan(null);
    await page.getByRole("button", { name: "Try again" }).click();
    await page.waitForLoadState();
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("The number is connected");
    await screenshot(page, "signup-done");
    await page.getByRole("link", { name: "See it on the Numbers page" }).click();
    expect(await page.getByRole("region", { name: "Unfinished signups" }).count()).toBe(0);
    await expect(page.getByRole("row", { name: /880000001/ }).textContent()).resolves.toContain("Embedded");
    expect(t.sim.world.registered.get("880000001")).toBe("424242");
    expect(t.world.deps.store.directory.numbers(acme.id)).toHaveLength(1);
    expect(problems).toEqual([]);
    await context.close();
  });

  test("coexistence: the history sync stays off until the pre-flight reached an endpoint, then the history reaches it", async () => {
    const acme = await t.account();
    const hook = receiver(() => new Response("not ready", { status: 503 }));
    hooks.push(hook);
    const { context, page, problems } = await signedIn(acme);
    await page.getByLabel(/already on the business app/).check();
    await signUpInPopup(page, { wabaId: "990000000", phoneNumberId: "990000001" });
    await expect(page.locator('[data-step="register"]').textContent()).resolves.toContain("Not needed");
    expect((await acme.api("POST", "/api/endpoints", { url: hook.url, fields: ["history"] })).status).toBe(201);

    await page.getByRole("link", { name: "sync its contacts and history" }).click();
    const history = page.locator('[data-sync="history"]');
    const start = history.getByRole("button", { name: "Start chat history sync" });
    expect(await start.isDisabled()).toBe(true);
    await history.getByRole("button", { name: "Run pre-flight" }).click();
    await expect(
      history.getByText("Not yet: retrying", { exact: true }).textContent({ timeout: 10_000 }),
    ).resolves.toBeTruthy();
    expect(await history.getByRole("button", { name: "Start chat history sync" }).isDisabled()).toBe(true);
    await screenshot(page, "coexistence-preflight-failing");

    hook.respond(() => new Response("ok"));
    await history.getByRole("button", { name: "Run pre-flight" }).click();
    await expect(
      page.locator('[data-sync="history"]').getByText("Answered 2xx", { exact: true }).textContent({ timeout: 10_000 }),
    ).resolves.toBeTruthy();
    await page.locator('[data-sync="history"]').getByRole("button", { name: "Start chat history sync" }).click();
    await expect(page.locator('[data-sync="history"]').textContent()).resolves.toContain(
      "The platform allows it once.",
    );
    await screenshot(page, "coexistence-started");

    await t.sim.webhooksIdle();
    const fields = async () =>
      hook.received.map((r) => JSON.parse(r.body).entry[0].changes[0].field).includes("history");
    expect(await eventually(fields, true, 5_000)).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  });
});
