import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { bearer, startWorld, type World } from "../support/world.ts";
import { launchBrowser, newContext, screenshot } from "./browser.ts";
import { createAccount, type TestAccount } from "./support.ts";

// Issue 19: the Requests page in a browser: the log newest first, a filter, lookup by a pasted
// request id, one call's detail in words; and the usage charts on the Numbers page.

const browser: Browser | null = await launchBrowser();

describe.skipIf(browser === null)("Requests page in a browser", () => {
  let world: World;
  let account: TestAccount;
  let phoneNumberId: string;
  const ids = { limited: "", first: "", firstMessage: "" };

  beforeAll(async () => {
    world = await startWorld();
    account = await createAccount(world.url, "Requests");
    const key = await world.key(account.id, "live");
    const { wabaId } = await world.waba(account.id);
    phoneNumberId = await world.number(account.id, wabaId);
    const send = () =>
      world.call(`/v21.0/${phoneNumberId}/messages`, {
        method: "POST",
        headers: { ...bearer(key), "content-type": "application/json" },
        body: JSON.stringify({ messaging_product: "chat", to: "15550100", type: "text", text: { body: "hi" } }),
      });
    const first = await send();
    ids.first = first.headers.get("x-proxy-request-id")!;
    ids.firstMessage = ((await first.json()) as { messages: { id: string }[] }).messages[0]!.id;
    for (let i = 0; i < 2; i++) await (await send()).arrayBuffer();
    world.sim.fault(phoneNumberId, { error: 130429 }, 1);
    await Promise.all(Array.from({ length: 80 }, async () => (await send()).arrayBuffer()));
    // Newest first is by time, then id: the refused call a moment later than the rest, so it heads the list.
    world.deps.clock.advance(1);
    for (let i = 0; i < 200 && !ids.limited; i++) {
      const r = await send();
      await r.arrayBuffer();
      if (r.status === 429) ids.limited = r.headers.get("x-proxy-request-id")!;
    }
    await world.app().requestLog!.flush();
  });
  afterAll(async () => {
    await browser?.close();
    await world.stop();
  });

  test("the log, a filter, a pasted request id and the words for a 429; the Numbers page charts the calls", async () => {
    const { context, page, problems } = await newContext(browser!, world.url);
    await page.goto("/dashboard/requests");
    await page.getByLabel("Email").fill(account.email);
    await page.getByLabel("Password").fill(account.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/requests");

    await expect(page.getByRole("link", { name: ids.limited }).count()).resolves.toBe(1);
    await page.getByLabel("Status").selectOption("2xx");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL("**/dashboard/requests?**status=2xx**");
    await expect(page.getByRole("link", { name: ids.limited }).count()).resolves.toBe(0);
    const outcomes = await page.locator("td[data-label=Outcome]").allTextContents();
    expect(outcomes.length).toBe(50);
    expect(outcomes.every((text) => text.includes("Upstream 200"))).toBe(true);
    await screenshot(page, "requests");

    // A request id pasted as a customer would send it, quotes and all.
    await page.getByLabel("Request id").fill(` "${ids.limited}" `);
    await page.getByRole("button", { name: "Find" }).click();
    await page.waitForURL(`**/dashboard/requests/${ids.limited}`);
    const detail = await page.locator("main").textContent();
    expect(detail).toContain("Switchboard 429 (1006)");
    expect(detail).toContain("rate limit was reached");
    expect(detail).toContain(phoneNumberId);
    await screenshot(page, "request");

    await page
      .getByLabel("Request id")
      .count()
      .then(async (n) => {
        if (n === 0) await page.goto("/dashboard/requests");
      });
    await page.getByLabel("Request id").fill("req_nothing_like_it");
    await page.getByRole("button", { name: "Find" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("No call req_nothing_like_it in your log");

    // The message the first send made: its timeline from the request's page.
    await page.goto(`/dashboard/requests/${ids.first}`);
    await page.getByRole("link", { name: ids.firstMessage }).click();
    await page.waitForURL(`**/dashboard/messages/${encodeURIComponent(ids.firstMessage)}`);
    const timeline = await page.getByRole("list", { name: "What happened to this message" }).textContent();
    expect(timeline).toContain("Sent");
    expect(timeline).toContain(ids.first);
    await screenshot(page, "message-timeline");

    await page.goto("/dashboard/numbers");
    const chart = page.locator("td.usage svg[role=img]").first();
    await expect(chart.getAttribute("aria-label")).resolves.toMatch(
      /, last 24 hours: \d+ forwarded, 1 upstream errors, \d+ refused by Switchboard in the last 24 hours$/,
    );
    await screenshot(page, "numbers-usage");
    expect(problems).toEqual([]);
    await context.close();
  });
});
