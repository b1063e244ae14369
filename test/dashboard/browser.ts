import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dir, "../../test-artifacts");

/**
 * Debian's chromium, never a downloaded browser. Playwright's server runs under Node
 * (browser-server.mjs) and the tests connect to it over a WebSocket: with client and server both
 * in Bun, Playwright's in-process channel now and then delivered its messages out of order
 * ("Cannot find parent object request@… to create response@…"), and a step whose page the server
 * had already answered waited out its time-out (1 run in 3 to 10 of the webhook pages suite).
 * Null (and a clear line on stderr) when Node or chromium cannot start here, so the browser
 * suites skip instead of failing on a machine without them.
 */
export async function launchBrowser(): Promise<Browser | null> {
  try {
    const server = Bun.spawn(["node", join(import.meta.dir, "browser-server.mjs")], {
      env: { ...process.env, CHROMIUM_PATH: CHROMIUM },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
    });
    const endpoint = await firstLine(server.stdout);
    const browser = await chromium.connect(endpoint);
    // Closing stdin tells the server to close chromium and exit.
    browser.on("disconnected", () => void server.stdin.end());
    return browser;
  } catch (error) {
    console.error(
      `SKIPPING dashboard browser tests: chromium could not be launched from ${CHROMIUM} through Node (${(error as Error).message.split("\n")[0]}). Install it with: apt-get install -y chromium`,
    );
    return null;
  }
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error("the browser server exited before it was ready");
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text.split("\n")[0]!;
}

/**
 * A browser context that records every CSP violation and page error, so a test can assert the
 * pages run under the strict policy without breaking.
 */
export async function newContext(
  browser: Browser,
  baseURL: string,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseURL });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    // Pages answered with a 4xx on purpose (a refused sign-in, a form with errors) are logged as
    // failed loads; anything else, a 404 above all (a missing asset), is a problem.
    const expected = /^Failed to load resource: the server responded with a status of 4(0[0139]|1\d|2\d)/.test(
      message.text(),
    );
    if (message.type() === "error" && !expected) problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  return { context, page, problems };
}

/** Saves the page at desktop and phone width under test-artifacts/<folder>/ (the dashboard's, or the operator console's). */
export async function screenshot(page: Page, name: string, folder = "dashboard"): Promise<void> {
  const dir = join(ARTIFACTS, folder);
  mkdirSync(dir, { recursive: true });
  const size = page.viewportSize() ?? { width: 1280, height: 900 };
  await page.screenshot({ path: join(dir, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  // The top of the page at phone width (long lists would make a strip too thin to look at).
  const height = Math.min(await page.evaluate(() => document.documentElement.scrollHeight), 1600);
  await page.screenshot({
    path: join(dir, `${name}-phone.png`),
    fullPage: true,
    clip: { x: 0, y: 0, width: 390, height },
  });
  await page.setViewportSize(size);
}
