import { afterEach, expect, test } from "bun:test";
import type { SignedUp } from "../../src/simulator/signup.ts";
import { signupWorld, type SignupWorld } from "./support.ts";
import type { ErrorEnvelope, SignupView } from "../support/api-json.ts";

// Issue 34, item 9: a signup holds a number only once the token its code was exchanged for has
// read that number from the platform. A real code for one's own business, sent with another
// business's number, holds nothing (a clear 4xx) and the number's owner signs it up at once; a
// signup whose PIN step failed is resumed by its own account only.

let t: SignupWorld;
afterEach(() => t.stop());

const body = (popup: Pick<SignedUp, "wabaId" | "phoneNumberId">, code: string, pin = "123456") => ({
  code,
  waba_id: popup.wabaId,
  phone_number_id: popup.phoneNumberId,
  pin,
});
const rows = (phoneNumberId: string) =>
  t.world.deps.query(`SELECT account_id FROM onboardings WHERE phone_number_id = '${phoneNumberId}'`);

test("a code for business A cannot hold business B's number: 4xx, no hold; B's owner signs it up at once", async () => {
  t = await signupWorld();
  const [squatter, owner] = [await t.account(), await t.account()];
  const mine = t.sim.signUp();
  const theirs = t.sim.signUp();
  // Its own real code, with the other business's WABA and number; then again, as a renewal would.
  for (const popup of [mine, t.sim.signUp({ wabaId: mine.wabaId, phoneNumberId: mine.phoneNumberId })]) {
    const taken = await squatter.api<ErrorEnvelope>("POST", "/api/signups", body(theirs, popup.code));
    expect(taken.status).toBe(403);
    expect(taken.body.error).toMatchObject({ code: "number_not_readable" });
    expect(taken.body.error.message).toContain(theirs.phoneNumberId);
  }
  expect(await rows(theirs.phoneNumberId)).toEqual([{ account_id: squatter.id }]);
  // The token read nothing: no number of B's, and no token kept for it.
  const stored = (await t.world.deps.store.onboardings.list({ phoneNumberId: theirs.phoneNumberId }, 0))[0]!;
  expect(stored).toMatchObject({ accessToken: null, code: null });
  expect(stored.steps.exchange?.status).toBe("failed");

  const real = await owner.api<SignupView>("POST", "/api/signups", body(theirs, theirs.code));
  expect(real.status).toBe(201);
  expect(real.body.status).toBe("done");
  expect(t.world.deps.store.directory.number(theirs.phoneNumberId)?.accountId).toBe(owner.id);
  expect(await rows(theirs.phoneNumberId)).toEqual([{ account_id: owner.id }]);
});

test("the legitimate path: the token reads its own number, then every step runs", async () => {
  t = await signupWorld();
  const a = await t.account();
  const popup = t.sim.signUp();
  const r = await a.api<SignupView>("POST", "/api/signups", body(popup, popup.code));
  expect(r.status).toBe(201);
  expect(r.body.status).toBe("done");
  expect(r.body.steps[0]).toMatchObject({ name: "exchange", status: "done" });
  const reads = t.sim.requests.filter((q) => q.method === "GET" && q.path.endsWith(`/${popup.phoneNumberId}`));
  // One read right after the exchange (the hold's proof), one in the sync step.
  expect(reads.length).toBe(2);
});

test("a signup whose PIN step failed is resumed by its own account only; another's retry is not found", async () => {
  t = await signupWorld();
  const [a, b] = [await t.account(), await t.account()];
  const popup = t.sim.signUp();
  // The number has two-step verification with another PIN: the register step fails.
  t.sim.world.registered.set(popup.phoneNumberId, "654321");
  const failed = await a.api<SignupView>("POST", "/api/signups", body(popup, popup.code));
  expect(failed.body).toMatchObject({
    status: "failed",
    steps: [{ status: "done" }, { status: "done" }, { name: "register", status: "failed" }, {}, {}],
  });
  for (const path of [`/api/signups/${failed.body.id}/retry`, `/api/signups/${failed.body.id}`]) {
    const other = await b.api<ErrorEnvelope>(
      path.endsWith("retry") ? "POST" : "GET",
      path,
      path.endsWith("retry") ? { pin: "654321" } : undefined,
    );
    expect(other.status).toBe(404);
    expect(other.body.error).toMatchObject({ code: "not_found", message: `No signup ${failed.body.id}.` });
  }
  expect(t.world.deps.store.directory.number(popup.phoneNumberId)).toBeUndefined();
  const resumed = await a.api<SignupView>("POST", `/api/signups/${failed.body.id}/retry`, { pin: "654321" });
  expect(resumed.body.status).toBe("done");
  expect(t.world.deps.store.directory.number(popup.phoneNumberId)?.accountId).toBe(a.id);
});
