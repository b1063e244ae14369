import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import { TEST_APP_SECRET } from "../support/harness.ts";
import { receiver } from "../webhooks/support.ts";
import { launchBrowser, newContext, screenshot } from "./browser.ts";
import { createAccount, dashboardWorld, operatorNumber, type TestAccount } from "./support.ts";

const browser: Browser | null = await launchBrowser();

async function signIn(page: Page, account: TestAccount, path: string) {
  await page.goto(path);
  await page.getByLabel("Email").fill(account.email);
  await page.getByLabel("Password").fill(account.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === path);
}

/**
 * Whether a delivery the receiver got carries a signature made with `secret`, computed by the
 * Standard Webhooks library. (Its verify() also checks the timestamp against the real clock, which
 * this test's manual clock is far from; the timestamp is checked against the manual clock instead.)
 */
function verifies(secret: string, got: { headers: Record<string, string>; body: string }, now: number): boolean {
  const timestamp = Number(got.headers["webhook-timestamp"]);
  expect(timestamp).toBe(Math.floor(now / 1000));
  const expected = new Webhook(secret).sign(got.headers["webhook-id"]!, new Date(timestamp * 1000), got.body);
  return got.headers["webhook-signature"]!.split(" ").includes(expected);
}

describe.skipIf(browser === null)("dashboard in a browser: endpoints and deliveries", () => {
  let world: Awaited<ReturnType<typeof dashboardWorld>>;
  const rx = receiver();
  let acme: TestAccount;
  let other: TestAccount;
  let page: Page;
  let problems: string[];
  let secret = "";
  let endpointPath = "";

  /** Lets the relay attempt what is due (the dispatcher also runs on its own; this waits for it). */
  const settle = () => world.relay.dispatcher.tick();

  /** Opens the endpoint, clicks Send test and waits for the result htmx swaps in. */
  async function sendTestAndWait(result: string) {
    await page.goto(endpointPath);
    await page.getByRole("button", { name: "Send test" }).click();
    await settle();
    await page.getByText(result).waitFor();
  }

  beforeAll(async () => {
    world = await dashboardWorld();
    world.upstream.numbers.set("3001", { display: "+1 555 0301", name: "Acme Hooks" });
    world.upstream.numbers.set("4001", { display: "+1 555 0401" });
    acme = await createAccount(world.url, "Hooks Acme");
    other = await createAccount(world.url, "Hooks Other");
    await operatorNumber(world.url, acme.id, "waba-h", "3001", "coexistence");
    await operatorNumber(world.url, other.id, "waba-ho", "4001");
    ({ page, problems } = await newContext(browser!, world.url));
    await signIn(page, acme, "/dashboard/endpoints");
  });
  afterAll(async () => {
    await browser?.close();
    rx.stop();
    await world.close();
  });

  test("add an endpoint: the field checklist says what each carries, the secret is shown once", async () => {
    await page.getByRole("link", { name: "Add endpoint" }).first().click();
    await page.waitForURL("**/dashboard/endpoints/new");
    await expect(page.getByRole("checkbox").count()).resolves.toBe(14);
    await expect(page.getByText("Inbound messages and delivery statuses").count()).resolves.toBe(1);
    expect(await page.getByLabel(/^messages/).isChecked()).toBe(true);
    await screenshot(page, "endpoint-new");

    // Nothing ticked, then a non-https address: each refused in words, the form keeps its values.
    await page.getByLabel(/^messages/).uncheck();
    await page.getByLabel(/^URL/).fill(rx.url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect(page.locator("#fields-error").textContent()).resolves.toContain("Choose 1 to 40");
    await page.getByLabel(/^messages/).check();
    await page.getByLabel(/^history/).check();
    await page.getByLabel(/^URL/).fill("ftp://hooks.example.com/x");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect(page.locator("#url-error").textContent()).resolves.toContain("not allowed");
    expect(await page.getByLabel(/^URL/).inputValue()).toBe("ftp://hooks.example.com/x");

    await page.getByLabel(/^URL/).fill(rx.url);
    await page.getByLabel(/^Number/).selectOption({ label: "+1 555 0301 (Acme Hooks)" });
    await page.getByRole("button", { name: "Add endpoint" }).click();
    secret = await page.getByLabel("Signing secret").inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await expect(page.getByRole("heading", { name: "Receiver guide" }).count()).resolves.toBe(1);
    // The guide also explains the platform scheme, and where each library's settings are.
    const platform = await page.locator("#platform-scheme").textContent();
    expect(platform).toContain("X-Hub-Signature-256");
    expect(platform).toContain("docs/receivers.md");
    await screenshot(page, "endpoint-created");

    await page.getByRole("link", { name: "← Endpoints" }).click();
    const row = page.getByRole("row", { name: new RegExp(rx.url.replaceAll(".", "\\.")) });
    await expect(row.textContent()).resolves.toContain("Enabled");
    await expect(row.textContent()).resolves.toContain("+1 555 0301");
    await row.getByRole("link").click();
    endpointPath = new URL(page.url()).pathname;
    expect(await page.content()).not.toContain(secret);
  });

  test("Send test: the result appears without a reload, and the receiver can verify it", async () => {
    await page.goto(endpointPath);
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    // By keyboard: focus the button and press Enter.
    await page.getByRole("button", { name: "Send test" }).focus();
    await page.keyboard.press("Enter");
    await settle();
    await page.getByText("Test delivered: the receiver answered HTTP 200").waitFor();
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42); // same page, no reload
    const got = rx.received.at(-1)!;
    expect(JSON.parse(got.body).proxy_test).toBe(true);
    expect(verifies(secret, got, world.deps.clock.now())).toBe(true);
  });

  test("a failing receiver: the test result, then every attempt and the next attempt time on the delivery", async () => {
    rx.respond(() => new Response("database is down", { status: 500 }));
    await sendTestAndWait("Test attempt 1 failed");
    await expect(page.locator("#test-result").textContent()).resolves.toContain("HTTP 500");
    await expect(page.locator("#test-result").textContent()).resolves.toContain("Next attempt 2026-01-01 00:00:05 UTC");

    // The retry schedule's first wait is 5 s: move the clock and let the relay try again.
    world.deps.clock.advance(5_000);
    await settle();
    await page.locator("#test-result").getByRole("link").click();
    await page.waitForURL("**/dashboard/deliveries/**");
    const attempts = page.getByRole("table", { name: "Attempts" });
    await expect(attempts.getByRole("row").count()).resolves.toBe(3); // header + 2 attempts
    const text = await attempts.textContent();
    expect(text).toContain("HTTP 500");
    expect(text).toContain("database is down");
    const summary = await page.locator("dl.facts").textContent();
    expect(summary).toContain("In progress");
    expect(summary).toContain("2026-01-01 00:01:05 UTC"); // second wait: 1 min
    await screenshot(page, "delivery-failing");
    rx.respond(() => new Response("ok"));
  });

  test("Replay makes a new delivery linked to the original; a history payload gone answers 410 in words", async () => {
    // An upstream event for the account, with a history change (its payload is deleted once delivered).
    const event = JSON.stringify({
      object: "whatsapp_business_account",
      entry: [
        {
          id: "waba-h",
          changes: [
            {
              field: "history",
              value: { messaging_product: "whatsapp", metadata: { phone_number_id: "3001" }, history: [] },
            },
          ],
        },
      ],
    });
    const bytes = new TextEncoder().encode(event);
    const res = await fetch(`${world.url}/webhooks/upstream`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hub-signature-256": hubSignature(TEST_APP_SECRET, bytes) },
      body: bytes,
    });
    expect(res.status).toBe(200);
    await settle();

    await page.goto("/dashboard/deliveries?status=succeeded");
    await expect(page.getByRole("row").count()).resolves.toBeGreaterThan(2);
    const newest = page.getByRole("row").nth(1);
    await newest.getByRole("link").first().click();
    await page.waitForURL("**/dashboard/deliveries/**");
    await expect(page.textContent("main")).resolves.toContain("The payload has been deleted");
    await page.getByRole("button", { name: "Replay" }).click();
    await expect(page.getByRole("alert").first().textContent()).resolves.toContain(
      "cannot be replayed: its payload has been deleted (410 payload_expired)",
    );
    await screenshot(page, "delivery-replay-expired");

    // A test delivery still has its payload: Replay works and links back.
    await page.goto("/dashboard/deliveries?status=succeeded");
    const original = await page.getByRole("row", { name: /test/ }).last().getByRole("link").first().textContent();
    await page.getByRole("link", { name: original! }).click();
    await page.getByRole("button", { name: "Replay" }).click();
    await page.waitForURL("**done=replayed**");
    await settle();
    await page.reload();
    await expect(page.textContent("main")).resolves.toContain("Succeeded");
    const replayOf = page.locator("dl.facts").getByRole("link", { name: original! });
    await expect(replayOf.count()).resolves.toBe(1);
    expect(rx.received.at(-1)!.headers["webhook-id"]).not.toBe(original!);
    await replayOf.click();
    await page.waitForURL(`**/dashboard/deliveries/${original}`);
  });

  test("Rotate secret: the new one is shown once with the overlap's end; deliveries carry both signatures", async () => {
    await page.goto(endpointPath);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = await page.getByLabel("New signing secret").inputValue();
    expect(rotated).not.toBe(secret);
    await expect(page.getByRole("status").first().textContent()).resolves.toContain(
      "Until 2026-01-02 00:00:05 UTC every delivery is signed with both",
    );
    await screenshot(page, "endpoint-rotated");
    await sendTestAndWait("Test delivered");
    const got = rx.received.at(-1)!;
    expect(got.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(verifies(rotated, got, world.deps.clock.now())).toBe(true);
    expect(verifies(secret, got, world.deps.clock.now())).toBe(true);
    secret = rotated;
  });

  test("Send test sends one change of the field chosen beside the button", async () => {
    await page.goto(endpointPath);
    expect(await page.getByLabel("Test event field").inputValue()).toBe("messages");
    await page.getByLabel("Test event field").selectOption("account_update");
    await page.getByRole("button", { name: "Send test" }).click();
    await settle();
    await page.getByText("Test delivered").waitFor();
    const body = JSON.parse(rx.received.at(-1)!.body);
    expect(body.proxy_test).toBe(true);
    expect(body.entry[0].changes.map((c: { field: string }) => c.field)).toEqual(["account_update"]);
  });

  test("a 410 disables the endpoint with the reason in words; Enable brings it back", async () => {
    rx.respond(() => new Response("gone", { status: 410 }));
    await sendTestAndWait("Test attempt 1 failed");
    await expect(page.locator("#test-result").textContent()).resolves.toContain("410 Gone");
    await page.reload();
    await expect(page.getByRole("alert").first().textContent()).resolves.toContain("the receiver answered 410 Gone");
    await page.goto("/dashboard/endpoints");
    await expect(page.getByRole("row", { name: /hook/ }).textContent()).resolves.toContain("Disabled (410 Gone)");
    await screenshot(page, "endpoints");
    await page.getByRole("row", { name: /hook/ }).getByRole("link").click();
    rx.respond(() => new Response("ok"));
    await page.getByRole("button", { name: "Enable" }).click();
    await page.waitForURL("**?done=enabled");
    const facts = await page.locator("dl.facts").textContent();
    expect(facts).toContain("Enabled");
    expect(facts).toMatch(/Failures in a row\s*0/);
    // The chart counts what happened in the last 24 hours.
    await expect(page.locator("figure.chart.large figcaption").textContent()).resolves.toMatch(
      /\d+ succeeded.*\d+ failed attempts.*1 parked/s,
    );
    await screenshot(page, "endpoint");
  });

  test("deliveries: filter by endpoint and status, newest first, paged", async () => {
    for (let i = 0; i < 26; i++) {
      world.deps.clock.advance(1000);
      await page.request.post(`${endpointPath}/test`, { headers: { origin: world.url } });
    }
    await settle();
    await page.goto("/dashboard/deliveries");
    await page.getByLabel("Status").selectOption("parked");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL("**status=parked**");
    const parkedRows = page.getByRole("table", { name: "Deliveries" }).getByRole("row");
    await expect(parkedRows.count()).resolves.toBe(2); // header + the 410 one
    await expect(parkedRows.nth(1).textContent()).resolves.toContain("Parked");

    await page.getByLabel("Status").selectOption("");
    await page.getByLabel("Endpoint").selectOption({ label: rx.url });
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL((url) => url.searchParams.has("endpoint_id") && url.searchParams.get("status") === "");
    const rows = page.getByRole("table", { name: "Deliveries" }).getByRole("row");
    await expect(rows.count()).resolves.toBe(26); // header + a page of 25
    const times = await page.locator("table time").evaluateAll((els) => els.map((e) => e.getAttribute("datetime")!));
    expect([...times].sort().reverse()).toEqual(times);
    await screenshot(page, "deliveries");
    await page.getByRole("link", { name: "Older" }).click();
    await page.waitForURL((url) => url.searchParams.has("cursor"));
    await expect(rows.count()).resolves.toBeGreaterThan(1);
    await page.getByRole("link", { name: "Newest" }).click();
    await page.waitForURL((url) => !url.searchParams.has("cursor"));
  });

  test("edit and delete an endpoint", async () => {
    await page.goto(endpointPath);
    await page.getByRole("link", { name: "Edit" }).click();
    await page.getByLabel(/^account_alerts/).check();
    await page.getByLabel(/^Number/).selectOption({ label: "All numbers" });
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL("**?done=saved");
    const facts = await page.locator("dl.facts").textContent();
    expect(facts).toContain("account_alerts");
    expect(facts).toContain("All numbers");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete" }).click();
    await page.waitForURL("**/dashboard/endpoints?done=deleted");
    await expect(page.textContent("main")).resolves.toContain("No endpoints yet");
    expect(problems).toEqual([]);
  });

  test("another account sees none of it and gets 404 for its ids; without a live number, adding says why", async () => {
    const ep = (await (
      await fetch(`${world.url}/api/endpoints`, {
        headers: { cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ") },
      })
    ).json()) as { data: unknown[] };
    expect(ep.data).toEqual([]);
    // Acme gets a fresh endpoint and a delivery for the check.
    await page.goto("/dashboard/endpoints/new");
    await page.getByLabel(/^URL/).fill(rx.url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const id = new URL(
      (await page.getByRole("link", { name: "See this endpoint's deliveries" }).getAttribute("href"))!,
      world.url,
    ).searchParams.get("endpoint_id")!;
    await page.getByRole("button", { name: "Send test" }).click();
    await settle();
    const deliveryId = (await page.locator("#test-result a").first().textContent())!;

    const { context, page: theirs } = await newContext(browser!, world.url);
    await signIn(theirs, other, "/dashboard/endpoints");
    expect(await theirs.textContent("main")).toContain("No endpoints yet");
    await theirs.goto("/dashboard/deliveries");
    expect(await theirs.textContent("main")).toContain("No deliveries yet");
    for (const path of [
      `/dashboard/endpoints/${id}`,
      `/dashboard/endpoints/${id}/edit`,
      `/dashboard/deliveries/${deliveryId}`,
      `/dashboard/deliveries?endpoint_id=${id}`,
    ]) {
      const response = await theirs.goto(path);
      expect([path, response!.status()]).toEqual([path, 404]);
    }
    for (const path of [
      `/dashboard/endpoints/${id}/delete`,
      `/dashboard/endpoints/${id}/rotate-secret`,
      `/dashboard/deliveries/${deliveryId}/replay`,
    ]) {
      const response = await theirs.request.post(path, { headers: { origin: world.url } });
      expect([path, response.status()]).toEqual([path, 404]);
    }
    // Other's only number is marked disconnected: adding an endpoint explains what is missing.
    await fetch(`${world.url}/admin/numbers/4001`, {
      method: "PATCH",
      headers: { authorization: "Bearer test-admin-token", "content-type": "application/json" },
      body: JSON.stringify({ status: "disconnected" }),
    });
    await theirs.goto("/dashboard/endpoints/new");
    await theirs.getByLabel(/^URL/).fill(rx.url);
    await theirs.getByRole("button", { name: "Add endpoint" }).click();
    await expect(theirs.getByRole("status").first().textContent()).resolves.toContain("Connect a live number first");
    await context.close();
  });
});
