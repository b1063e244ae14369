import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { launchBrowser, newContext, screenshot } from "../dashboard/browser.ts";
import { startApp, testDeps, type TestDeps } from "../support/harness.ts";

const browser: Browser | null = await launchBrowser();

describe.skipIf(browser === null)("/docs in a browser", () => {
  let deps: TestDeps;
  let server: ReturnType<typeof startApp>;
  beforeAll(async () => {
    deps = await testDeps();
    server = startApp(deps);
  });
  afterAll(async () => {
    await browser?.close();
    await server.stop();
    await deps.cleanup();
  });

  test("renders every operation with the network to everything but the service cut off, and breaks no CSP rule", async () => {
    const { context, page, problems } = await newContext(browser!, server.url);
    const elsewhere: string[] = [];
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (new URL(url).origin === server.url) return route.continue();
      elsewhere.push(url);
      return route.abort("internetdisconnected");
    });
    const violations: string[] = [];
    await page.exposeFunction("reportViolation", (line: string) => void violations.push(line));
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) => {
        (window as unknown as { reportViolation(line: string): void }).reportViolation(
          `${e.violatedDirective} ${e.blockedURI}`,
        );
      });
    });
    const spec = (await (await fetch(`${server.url}/docs/json`)).json()) as {
      paths: Record<string, Record<string, { summary: string }>>;
    };
    const summaries = Object.values(spec.paths).flatMap((ops) => Object.values(ops).map((op) => op.summary));

    await page.goto("/docs");
    await page.getByRole("heading", { name: "Switchboard" }).first().waitFor();
    // Open every tag of the sidebar (the first is open), as a reader would.
    const closed = page.locator('li[data-sidebar-id*="/tag/"] > div > button[aria-expanded="false"]');
    while ((await closed.count()) > 0) await closed.first().click();
    const text = (await page.locator("body").allInnerTexts()).join("\n");
    expect(summaries.length).toBeGreaterThan(30);
    expect(summaries.filter((summary) => !text.includes(summary))).toEqual([]);
    await page.getByRole("heading", { name: "Create an account" }).waitFor();
    await screenshot(page, "api-docs");

    expect(elsewhere).toEqual([]); // Scalar did not even try to reach another origin
    expect(problems).toEqual([]); // no CSP refusal, no failed load, no script error
    // The only refusal: the bundle's zod probes `Function('')` in a try and, refused, does without.
    expect(violations.filter((v) => v !== "script-src eval")).toEqual([]);
  });
});
