import { afterEach, expect, test } from "bun:test";
import type { SignedUp } from "../../src/simulator/signup.ts";
import { onSqlite } from "../support/backend.ts";
import { signupWorld, type SignupWorld } from "./support.ts";
import type { ErrorEnvelope, ListJson, NumberJson, SignupView } from "../support/api-json.ts";

// Issue 26, item 3: two accounts' first signups of one number never share a record. Both start at
// once, each with a code the platform accepts; the number ends in one account, the other is told
// so in the catalog's envelope, and nothing of the winner's is touched. PostgreSQL runs them truly
// side by side; one SQLite process interleaves them at every await, so fewer rounds show it there.

const ROUNDS = onSqlite ? 10 : 100;

let t: SignupWorld;
afterEach(() => t.stop());

const body = (popup: SignedUp) => ({
  code: popup.code,
  waba_id: popup.wabaId,
  phone_number_id: popup.phoneNumberId,
  pin: "123456",
});

test(`two accounts start a signup of one new number at once, ${ROUNDS} times: one account gets it, the other a 409, nothing shared`, async () => {
  t = await signupWorld({ env: { EMBEDDED_SIGNUP_STARTS_PER_HOUR: "1000", EMBEDDED_SIGNUP_MAX_UNFINISHED: "1000" } });
  const accounts = [await t.account(), await t.account()] as const;
  for (let round = 0; round < ROUNDS; round++) {
    const first = t.sim.signUp();
    const second = t.sim.signUp({ wabaId: first.wabaId, phoneNumberId: first.phoneNumberId });
    const answers = await Promise.all([
      accounts[0].api<SignupView | ErrorEnvelope>("POST", "/api/signups", body(first)),
      accounts[1].api<SignupView | ErrorEnvelope>("POST", "/api/signups", body(second)),
    ]);
    const won = answers.findIndex((r) => r.status === 201);
    expect(won).toBeGreaterThanOrEqual(0);
    const [winner, loser] = [accounts[won]!, accounts[1 - won]!];
    const [winning, losing] = [answers[won]!, answers[1 - won]!];
    expect(winning.body).toMatchObject({ status: "done" });
    const signup = winning.body;
    if (!("id" in signup)) throw new Error(`the winner was refused: ${JSON.stringify(signup)}`);
    expect(losing.status).toBe(409);
    expect(losing.body).toMatchObject({
      error: {
        type: "ConflictException",
        code: "conflict",
        message: expect.stringMatching(/^Number \d+ is (being connected by another account|already connected)\.$/),
      },
    });

    const { directory } = t.world.deps.store;
    expect(directory.number(first.phoneNumberId)?.accountId).toBe(winner.id);
    expect(directory.waba(first.wabaId)).toMatchObject({
      accountId: winner.id,
      accessToken: t.sim.world.wabas.get(first.wabaId)!.accessToken,
      status: "connected",
    });
    expect(
      await t.world.deps.query(
        `SELECT id, account_id FROM onboardings WHERE phone_number_id = '${first.phoneNumberId}'`,
      ),
    ).toEqual([{ id: signup.id, account_id: winner.id }]);
    expect((await loser.api("GET", `/api/signups/${signup.id}`)).status).toBe(404);
    expect((await winner.api("GET", `/api/signups/${signup.id}`)).body).toEqual(signup);
  }
  for (const account of accounts) {
    const numbers = (await account.api<ListJson<NumberJson>>("GET", "/api/numbers")).body.data as {
      phone_number_id: string;
    }[];
    for (const n of numbers) expect(t.world.deps.store.directory.number(n.phone_number_id)?.accountId).toBe(account.id);
  }
}, 300_000);
