// Runs under Node (see browser.ts): starts Debian's chromium through Playwright and prints the
// WebSocket address Playwright clients connect to; closes the browser when stdin ends.
import { chromium } from "playwright-core";

const server = await chromium.launchServer({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"],
});
process.stdout.write(`${server.wsEndpoint()}\n`);
process.stdin.on("end", () => void server.close().finally(() => process.exit(0)));
process.stdin.resume();
