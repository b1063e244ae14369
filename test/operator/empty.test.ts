import { afterAll, beforeAll, expect, test } from "bun:test";
import { consoleWorld, type ConsoleWorld } from "./support.ts";

// Issue 35: a new service's console says what to do next where there is nothing to show yet,
// rather than a figure that reads as good news ("Every number is connected." with no numbers).

let world: ConsoleWorld;
let cookie: string;
beforeAll(async () => {
  world = await consoleWorld();
  cookie = (await world.operator()).cookie;
});
afterAll(() => world.close());

const page = async (path: string) => (await world.get(cookie, path)).text();

test("the overview of a service with no account and no number says what to do next", async () => {
  const overview = await page("/operator");
  expect(overview).toContain("No accounts yet.");
  expect(overview).toContain('<a href="/operator/accounts">Create the first one</a>');
  expect(overview).toContain("No numbers yet: customers connect theirs on their dashboard");
  expect(overview).not.toContain("is connected");
  expect(overview).toContain("no call reached upstream");
  expect(overview).toContain("none accepted since");
  expect(await page("/operator/numbers")).toContain("No numbers yet:");
  expect(await page("/operator/accounts")).toContain("No accounts yet. Create one below.");
});
