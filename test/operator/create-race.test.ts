import { afterAll, beforeAll, expect, test } from "bun:test";
import { allEntries } from "../audit/support.ts";
import { consoleWorld, type ConsoleWorld } from "./support.ts";

// Issue 34, item 8: the console's "new account with its first login" is one change. Two
// submissions of the same login email at once: one creates the account and its user (303), the
// other creates nothing at all (409): no account, no user, no audit entry.

let world: ConsoleWorld;
let cookie: string;

beforeAll(async () => {
  world = await consoleWorld();
  cookie = (await world.operator()).cookie;
});
afterAll(() => world.close());

const form = (n: number, round: number) => ({
  name: `Racer ${round}-${n}`,
  email: `billing-${round}-${n}@racer.example`,
  billing_status: "active",
  retention: "24h",
  user_email: `first-${round}@racer.example`,
  user_password: "racer password 1",
});

test("two submissions at once for one login email: one account, one user, the loser leaves nothing", async () => {
  for (let round = 0; round < 5; round++) {
    const accountsBefore = world.deps.store.directory.accounts().length;
    const entriesBefore = (await allEntries(world.url, { action: "account.create" })).length;
    const answers = await Promise.all([0, 1, 2].map((n) => world.post(cookie, "/operator/accounts", form(n, round))));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([303, 409, 409]);
    // Every instance's directory and the database agree: exactly one account more.
    await world.deps.store.directory.refresh();
    const made = world.deps.store.directory.accounts().filter((a) => a.name.startsWith(`Racer ${round}-`));
    expect(made.length).toBe(1);
    expect(world.deps.store.directory.accounts().length).toBe(accountsBefore + 1);
    const users = await world.deps.store.users.ofAccount(made[0]!.id);
    expect(users.map((u) => u.email)).toEqual([`first-${round}@racer.example`]);
    const created = await allEntries(world.url, { action: "account.create" });
    expect(created.length).toBe(entriesBefore + 1);
    expect(created.filter((e) => e.object.id === made[0]!.id).length).toBe(1);
    expect((await allEntries(world.url, { account_id: made[0]!.id })).map((e) => e.action).sort()).toEqual([
      "account.create",
      "user.create",
    ]);
  }
});
