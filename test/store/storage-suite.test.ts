// The storage seam's promises (src/store/store.ts and the interfaces it names), one suite for every
import { newNumber } from "../../src/numbers/numbers.ts";
import { NO_CAUSE, type Waba } from "../../src/store/types.ts";
// backend: it runs on the one SWITCHBOARD_TEST_BACKEND names, and `.ci/run` runs it on each.
// Tests of one backend's own machinery are beside it (webhook-store.test.ts and storage.test.ts
// for SQLite's, postgres.test.ts for PostgreSQL's).
import { afterEach, describe, expect, test } from "bun:test";
import type { Onboarding } from "../../src/store/onboardings.ts";
import { newRecovery } from "../../src/store/recoveries.ts";
import { timeOrderedId } from "../../src/runtime/random.ts";
import type { Store } from "../../src/store/store.ts";
import { LAST_SUCCESS_RESOLUTION_MS, type Completion } from "../../src/store/queue.ts";
import { newDeliveryId, newEventId } from "../../src/webhooks/ids.ts";
import { FAILURE_RULES } from "../../src/webhooks/outcome.ts";
import { testDeps, type TestDeps } from "../support/harness.ts";
import { deliveryRow, endpointRow, eventRow, firstAttempt } from "../support/queue-rows.ts";
import { onboardingRow, requestRecord as record } from "../support/store-rows.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const HOUR = 3_600_000;
const RETENTION = { "24h": 24 * HOUR, "7d": 7 * 24 * HOUR };
const EVERYTHING = Number.POSITIVE_INFINITY;

async function fresh(env?: Record<string, string>): Promise<TestDeps> {
  const deps = await testDeps({ env });
  cleanups.push(deps.cleanup);
  return deps;
}

async function account(store: Store, id: string, at: number) {
  return store.directory.createAccount({
    id,
    name: `Account ${id}`,
    email: `${id}@example.com`,
    billingStatus: "active",
    retention: "24h",
    maxNumbers: null,
    createdAt: at,
  });
}

/** An account with one endpoint, and helpers that queue, claim and complete its deliveries. */
async function queue() {
  const deps = await fresh();
  const { store } = deps;
  const t = deps.clock.now();
  await account(deps.store, "acc_suite", t);
  const endpoint = endpointRow("ep_suite", "acc_suite", t);
  await store.endpoints.create(endpoint);
  let leases = 0;
  return {
    deps,
    store,
    endpoint,
    t,
    /** Queues one delivery to `endpointId`, due at `at`; returns its id. */
    async due(at: number, endpointId = endpoint.id) {
      const event = eventRow(newEventId(deps.random, at), "acc_suite", at);
      const delivery = deliveryRow(newDeliveryId(deps.random, at), event, endpointId, at);
      await store.queue.enqueue([event], [delivery]);
      return delivery.id;
    },
    /** Claims at `now` under a fresh lease id. */
    claim(now: number, options: { limit?: number; perEndpoint?: number; maxBytes?: number; leaseId?: string } = {}) {
      return store.queue.claimDue(now, {
        leaseId: options.leaseId ?? `lease_${++leases}`,
        limit: options.limit ?? 64,
        perEndpoint: options.perEndpoint ?? 10,
        leaseMs: 70_000,
        maxBytes: options.maxBytes ?? EVERYTHING,
      });
    },
  };
}
type Queue = Awaited<ReturnType<typeof queue>>;
const succeeded = { next: { status: "succeeded" }, effect: "success" } as const;
/** A failure whose retry is due long after every test's last claim. */
const failed = (at: number) =>
  ({ next: { status: "pending", nextAttemptAt: at + 30 * 24 * HOUR }, effect: "failure" }) as const;
const gone = { next: { status: "parked", reason: "gone" }, effect: "gone" } as const;

/** Queues a delivery at `at`, claims it, and records one attempt answered `status`. */
async function attemptAt(q: Queue, at: number, status: number, result: Pick<Completion, "next" | "effect">) {
  const id = await q.due(at);
  const [claimed] = await q.claim(at);
  expect(claimed?.delivery.id).toBe(id);
  return {
    id,
    change: await q.store.queue.completeAttempt(firstAttempt(id, q.endpoint.id, at, status, result, claimed!.leaseId)),
  };
}

/** WABA 1001 of `accountId`, connected at `t`. */
const wabaAt = (t: number, accountId: string, accessToken: string, appSecret: string | null = null): Waba => ({
  ...NO_CAUSE,
  wabaId: "1001",
  accountId,
  accessToken,
  appSecret,
  status: "connected",
  createdAt: t,
  updatedAt: t,
});

/** A number of `wabaId`, connected at `t`, its details not read yet. */
const numberAt = (t: number, accountId: string, phoneNumberId: string, wabaId = "1001") =>
  newNumber(accountId, { phone_number_id: phoneNumberId, waba_id: wabaId, kind: "embedded" }, t);

describe("the directory", () => {
  test("is written through: every write is read back at once, and a second store over the database has it after refresh()", async () => {
    const deps = await fresh();
    const { directory } = deps.store;
    const t = deps.clock.now();
    await account(deps.store, "acc_dir", t);
    expect(directory.account("acc_dir")?.name).toBe("Account acc_dir");
    expect((await directory.updateAccount("acc_dir", { billingStatus: "overdue" }))?.billingStatus).toBe("overdue");
    expect(directory.account("acc_dir")?.billingStatus).toBe("overdue");
    await directory.createApiKey({
      id: "key_1",
      accountId: "acc_dir",
      mode: "live",
      name: null,
      prefix: "px_live_ab",
      keyHash: "hash_1",
      createdAt: t,
      revokedAt: null,
    });
    await directory.createWaba(wabaAt(t, "acc_dir", "tok"));
    await directory.createNumber(numberAt(t, "acc_dir", "2001"));
    expect(directory.apiKeyByHash("hash_1")?.id).toBe("key_1");
    expect(directory.numbersOfWaba("1001").map((n) => n.phoneNumberId)).toEqual(["2001"]);

    const other = await deps.anotherStore();
    await other.directory.revokeApiKey("key_1", t + 1);
    const cause = {
      causeCode: 190,
      causeMessage: "Error validating access token.",
      causeAt: t + 1,
      causeRequestId: "req_1",
    };
    await other.directory.updateWaba("1001", {
      status: "token_revoked",
      ...cause,
      accessToken: "tok2",
      updatedAt: t + 1,
    });
    await other.directory.updateNumber("2001", {
      status: "flagged",
      causeCode: 368,
      causeMessage: "Temporarily blocked.",
      causeAt: t + 1,
      causeRequestId: null,
      updatedAt: t + 1,
    });
    // However the backend hears of another's changes, refresh() is the backstop that must find them.
    await directory.refresh();
    expect(directory.apiKeyByHash("hash_1")?.revokedAt).toBe(t + 1);
    // A state and its cause (docs/proxy.md#upstream-errors-that-change-a-state) travel together.
    expect(directory.waba("1001")).toMatchObject({ status: "token_revoked", accessToken: "tok2", ...cause });
    expect(directory.number("2001")).toMatchObject({
      status: "flagged",
      causeCode: 368,
      causeMessage: "Temporarily blocked.",
      causeAt: t + 1,
      causeRequestId: null,
    });
    expect(await directory.updateWaba("1001", { status: "connected", ...NO_CAUSE, updatedAt: t + 2 })).toMatchObject({
      status: "connected",
      ...NO_CAUSE,
      accessToken: "tok2",
    });
    await other.directory.refresh();
    expect(other.directory.waba("1001")).toMatchObject({ status: "connected", ...NO_CAUSE });
    // A key revoked once keeps its first revocation time.
    expect((await directory.revokeApiKey("key_1", t + 5))?.revokedAt).toBe(t + 1);
    // Nothing changed since: nothing to reload.
    expect(await directory.refresh()).toBe(false);
  });
});

describe("the directory's creates", () => {
  test("a WABA or number id another store has stored since this one read is not created: null, and the stored one is unchanged", async () => {
    const deps = await fresh();
    const t = deps.clock.now();
    await account(deps.store, "acc_a", t);
    await account(deps.store, "acc_b", t);
    const other = await deps.anotherStore();
    expect(await deps.store.directory.createWaba(wabaAt(t, "acc_a", "tok_a"))).toMatchObject({ accountId: "acc_a" });
    expect(await deps.store.directory.createNumber(numberAt(t, "acc_a", "2001"))).toMatchObject({ accountId: "acc_a" });
    // `other` may not have heard of them yet: the insert itself refuses.
    expect(await other.directory.createWaba(wabaAt(t, "acc_b", "tok_b"))).toBeNull();
    expect(await other.directory.createNumber(numberAt(t, "acc_b", "2001"))).toBeNull();
    for (const directory of [deps.store.directory, other.directory]) {
      await directory.refresh();
      expect(directory.waba("1001")).toMatchObject({ accountId: "acc_a", accessToken: "tok_a" });
      expect(directory.number("2001")).toMatchObject({ accountId: "acc_a" });
    }
  });
});

describe("the directory's connect", () => {
  test("one transaction: what is absent is inserted, the account's own WABA takes the new token; another's WABA or number refuses and nothing is written", async () => {
    const deps = await fresh();
    const { directory } = deps.store;
    const t = deps.clock.now();
    await account(deps.store, "acc_a", t);
    await account(deps.store, "acc_b", t);
    const waba = (accountId: string, accessToken: string, appSecret: string | null = null) =>
      wabaAt(t, accountId, accessToken, appSecret);
    const number = (accountId: string, phoneNumberId: string, wabaId = "1001") =>
      numberAt(t, accountId, phoneNumberId, wabaId);
    const first = await directory.connect(waba("acc_a", "tok-a"), number("acc_a", "2001"));
    expect(first).toMatchObject({
      created: true,
      waba: { accountId: "acc_a", accessToken: "tok-a" },
      number: { accountId: "acc_a", wabaId: "1001" },
    });

    // B's claims on A's WABA or number: refused, A's rows exactly as they were.
    await directory.updateWaba("1001", {
      status: "token_revoked",
      causeCode: 190,
      causeMessage: "revoked",
      causeAt: t,
      causeRequestId: null,
      updatedAt: t + 1,
    });
    const before = directory.waba("1001");
    expect(await directory.connect(waba("acc_b", "tok-b"), number("acc_b", "2002"))).toEqual({ refused: "waba_taken" });
    expect(
      await directory.connect({ ...waba("acc_b", "tok-b"), wabaId: "1002" }, number("acc_b", "2001", "1002")),
    ).toEqual({ refused: "number_taken" });
    expect(
      await directory.connect({ ...waba("acc_a", "tok-a"), wabaId: "1002" }, number("acc_a", "2001", "1002")),
    ).toEqual({ refused: "number_elsewhere" });
    expect(await directory.connect(waba("acc_a", "tok-byo", "secret"), number("acc_a", "2003"))).toEqual({
      refused: "waba_other_app",
    });
    expect(directory.waba("1001")).toEqual(before);
    expect(directory.waba("1002")).toBeUndefined();
    expect([directory.number("2002"), directory.number("2003")]).toEqual([undefined, undefined]);
    const other = await deps.anotherStore();
    expect(other.directory.waba("1002")).toBeUndefined();

    // A again (a new signup): the WABA takes the new token and is connected; the number stays as it is.
    const again = await directory.connect({ ...waba("acc_a", "tok-a2"), updatedAt: t + 2 }, number("acc_a", "2001"));
    expect(again).toMatchObject({
      created: false,
      waba: { accessToken: "tok-a2", status: "connected", ...NO_CAUSE, updatedAt: t + 2, createdAt: t },
    });
    await other.directory.refresh();
    expect(other.directory.waba("1001")).toMatchObject({ accessToken: "tok-a2", status: "connected" });
  });
});

describe("bulk recovers", () => {
  /** A new recover of the queue's endpoint, as it starts. */
  const newJob = (q: Queue, id: string) =>
    newRecovery({ id, accountId: "acc_suite", endpointId: q.endpoint.id, since: q.t - HOUR }, q.t);

  test("one runs per endpoint; progress is fenced on the heartbeat; a stale one is taken over", async () => {
    const q = await queue();
    const job = newJob(q, "rcv_1");
    const recoveries = q.deps.store.recoveries;
    expect((await recoveries.start(job)).started).toBe(true);
    const second = await recoveries.start({ ...job, id: "rcv_2" });
    expect([second.started, second.recovery.id]).toEqual([false, "rcv_1"]);
    const step = {
      found: 100,
      replayed: 97,
      skippedExpired: 3,
      skippedReplayed: 0,
      cursor: { createdAt: q.t - 5, id: "msg_x" },
      status: "running" as const,
      updatedAt: q.t + 1,
    };
    expect(await recoveries.progress("rcv_1", q.t, step)).toBe(true);
    // A runner that read an older heartbeat lost the job: its write is refused.
    expect(await recoveries.progress("rcv_1", q.t, { ...step, found: 1 })).toBe(false);
    expect(await recoveries.get("rcv_1")).toMatchObject({
      found: 100,
      cursor: { createdAt: q.t - 5, id: "msg_x" },
      updatedAt: q.t + 1,
    });
    expect(await recoveries.takeOver("rcv_1", q.t + 1, q.t + 10)).toBeUndefined();
    expect(await recoveries.takeOver("rcv_1", q.t + 2, q.t + 10)).toMatchObject({ id: "rcv_1", updatedAt: q.t + 10 });
    expect(await recoveries.progress("rcv_1", q.t + 10, { ...step, status: "done", updatedAt: q.t + 11 })).toBe(true);
    expect((await recoveries.start({ ...job, id: "rcv_3", startedAt: q.t + 20 })).started).toBe(true);
    expect((await recoveries.latest(q.endpoint.id))?.id).toBe("rcv_3");
  });
  test("a start while another store finishes the running one answers each time: the new one started, or the one running", async () => {
    const q = await queue();
    const other = await q.deps.anotherStore();
    const job = (id: string) => newJob(q, id);
    const done = {
      found: 0,
      replayed: 0,
      skippedExpired: 0,
      skippedReplayed: 0,
      cursor: null,
      status: "done" as const,
      updatedAt: q.t + 1,
    };
    for (let round = 0; round < 200; round++) {
      const running = `rcv_${round}_a`;
      expect((await other.recoveries.start(job(running))).started).toBe(true);
      // The finish lands before, between or after the start's statements.
      const [answer] = await Promise.all([
        q.deps.store.recoveries.start(job(`rcv_${round}_b`)),
        other.recoveries.progress(running, q.t, done),
      ]);
      expect(answer.recovery.id).toBe(answer.started ? `rcv_${round}_b` : running);
      if (answer.started) expect(await q.deps.store.recoveries.progress(answer.recovery.id, q.t, done)).toBe(true);
    }
    expect((await q.deps.store.recoveries.latest(q.endpoint.id))?.status).toBe("done");
  });
});

describe("onboardings", () => {
  const HOUR_LATER = (q: Queue) => q.t + HOUR;
  const onboarding = (q: Queue, overrides: Partial<Onboarding> = {}) => onboardingRow(q.t, overrides);

  test("one per number; one run at a time, its writes fenced on its lease; pre-flights and syncs merge beside a run; secrets sealed", async () => {
    const q = await queue();
    const onboardings = q.deps.store.onboardings;
    const o = onboarding(q);
    const at = { now: q.t, numberIsTheirs: false };
    expect(await onboardings.create(o, at)).toEqual({ onboarding: o });
    expect(await onboardings.create({ ...o, id: "sgn_2", code: "other" }, at)).toEqual({ onboarding: o });

    expect((await onboardings.unfinished("acc_suite", q.t)).map((u) => u.id)).toEqual(["sgn_1"]);
    // Only its own account can lease it.
    expect(await onboardings.claim("sgn_1", "acc_other", q.t, q.t + 100)).toBeUndefined();
    const leased = (await onboardings.claim("sgn_1", "acc_suite", q.t, q.t + 100))!;
    expect(leased.leaseUntil).toBe(q.t + 100);
    expect(await onboardings.claim("sgn_1", "acc_suite", q.t + 50, q.t + 150)).toBeUndefined();
    const run = {
      ...leased,
      code: null,
      accessToken: "EAAG-token",
      pin: null,
      leaseUntil: null,
      finishedAt: q.t + 5,
      expiresAt: null,
      updatedAt: q.t + 5,
      steps: {
        exchange: { status: "done" as const, at: q.t + 1 },
        register: { status: "failed" as const, at: q.t + 2, reason: "no", code: 100 },
      },
    };
    // Beside the run: two fields' pre-flights and a sync, none undoing another.
    await onboardings.recordPreflight(
      "sgn_1",
      "history",
      { at: q.t + 3, deliveries: [{ endpointId: "ep", deliveryId: "dl" }] },
      q.t + 3,
    );
    await onboardings.recordPreflight("sgn_1", "smb_app_state_sync", { at: q.t + 4, deliveries: [] }, q.t + 4);
    await onboardings.recordSync("sgn_1", "history", { at: q.t + 4, requestId: "r1", overridden: false }, q.t + 4);
    expect(await onboardings.saveRun(run, q.t + 99)).toBe(false);
    expect(await onboardings.saveRun(run, q.t + 100)).toBe(true);
    const expected = {
      ...run,
      preflights: {
        history: { at: q.t + 3, deliveries: [{ endpointId: "ep", deliveryId: "dl" }] },
        smb_app_state_sync: { at: q.t + 4, deliveries: [] },
      },
      syncs: { history: { at: q.t + 4, requestId: "r1", overridden: false } },
    };
    expect(await onboardings.get("sgn_1", q.t + 6)).toEqual(expected);
    expect(await onboardings.byNumber("acc_suite", "pn_1", q.t + 6)).toEqual(expected);
    expect(await onboardings.byNumber("acc_other", "pn_1", q.t + 6)).toBeUndefined();
    expect(await onboardings.unfinished("acc_suite", q.t + 6)).toEqual([]);
    // Released: the next run may claim it, as it may once a lease ran out.
    expect(await onboardings.claim("sgn_1", "acc_suite", q.t + 6, q.t + 200)).toBeDefined();
    expect(await onboardings.claim("sgn_1", "acc_suite", q.t + 200, q.t + 300)).toBeDefined();
    const [raw] = await q.deps.query("SELECT access_token_enc FROM onboardings WHERE id = 'sgn_1'");
    expect(raw!.access_token_enc).not.toContain("EAAG-token");
  });

  test("another account's create never gets the stored one: it takes its place only once it holds the number no more", async () => {
    const q = await queue();
    await account(q.deps.store, "acc_b", q.t);
    const onboardings = q.deps.store.onboardings;
    const a = onboarding(q);
    const b = onboarding(q, { id: "sgn_b", accountId: "acc_b", code: "AQ-b" });
    const at = (now: number, numberIsTheirs = false) => ({ now, numberIsTheirs });
    await onboardings.create(a, at(q.t));
    // Not past the code exchange, but a run holds it: B is refused.
    await onboardings.claim("sgn_1", "acc_suite", q.t, q.t + 100);
    expect(await onboardings.create(b, at(q.t + 1))).toEqual({ refused: "held" });
    // Its run ended without an exchange (a made-up code): B takes its place.
    expect(await onboardings.create(b, at(q.t + 100))).toEqual({ onboarding: b });
    expect(await onboardings.get("sgn_1", q.t + 100)).toBeUndefined();
    // Past the exchange, B's signup holds the number against A until it expires.
    const holding = {
      ...b,
      code: null,
      accessToken: "EAAG-b",
      steps: { exchange: { status: "done" as const, at: q.t } },
    };
    expect(await onboardings.claim("sgn_b", "acc_b", q.t + 100, q.t + 200)).toBeDefined();
    expect(await onboardings.saveRun({ ...holding, leaseUntil: null }, q.t + 200)).toBe(true);
    expect(await onboardings.create(a, at(q.t + 200))).toEqual({ refused: "held" });
    // Unless the number is A's already (the operator connected it there).
    const again = { ...a, id: "sgn_a2" };
    expect(await onboardings.create(again, at(q.t + 200, true))).toEqual({ onboarding: again });
    await onboardings.delete("sgn_a2");
    await onboardings.create({ ...b, ...holding, leaseUntil: null }, at(q.t + 200));
    expect(await onboardings.create(a, at(HOUR_LATER(q) - 1))).toEqual({ refused: "held" });
    expect(await onboardings.create(a, at(HOUR_LATER(q)))).toEqual({ onboarding: a });
    const [row] = await q.deps.query("SELECT id, account_id FROM onboardings WHERE phone_number_id = 'pn_1'");
    expect(row).toEqual({ id: "sgn_1", account_id: "acc_suite" });
    // A finished one is its account's number: never taken over.
    await onboardings.claim("sgn_1", "acc_suite", HOUR_LATER(q), HOUR_LATER(q) + 10);
    await onboardings.saveRun(
      { ...a, finishedAt: HOUR_LATER(q), expiresAt: null, leaseUntil: null },
      HOUR_LATER(q) + 10,
    );
    expect(await onboardings.create(b, at(HOUR_LATER(q) * 2, true))).toEqual({ refused: "held" });
  });

  test("two accounts' first creates of one number at once: one stores its own, the other is refused, 20 times", async () => {
    const q = await queue();
    await account(q.deps.store, "acc_b", q.t);
    for (let i = 0; i < 20; i++) {
      // As a signup creates it: leased by the run about to start.
      const mine = (accountId: string) =>
        onboarding(q, { id: `sgn_${accountId}_${i}`, accountId, phoneNumberId: `pn_race_${i}`, leaseUntil: q.t + 100 });
      const [a, b] = [mine("acc_suite"), mine("acc_b")];
      const results = await Promise.all(
        [a, b].map((o) => q.deps.store.onboardings.create(o, { now: q.t, numberIsTheirs: false })),
      );
      expect(results.filter((r) => "refused" in r)).toEqual([{ refused: "held" }]);
      const stored = results.find((r) => "onboarding" in r) as { onboarding: Onboarding };
      expect([a, b]).toContainEqual(stored.onboarding);
      expect(await q.deps.query(`SELECT id FROM onboardings WHERE phone_number_id = 'pn_race_${i}'`)).toEqual([
        { id: stored.onboarding.id },
      ]);
    }
  });

  test("the cap counts the account's live unfinished ones; two created at once both count", async () => {
    const q = await queue();
    const onboardings = q.deps.store.onboardings;
    const capped = (n: number, now = q.t) =>
      onboardings.create(onboarding(q, { id: `sgn_${n}`, phoneNumberId: `pn_${n}` }), {
        now,
        numberIsTheirs: false,
        maxUnfinished: 2,
      });
    const both = await Promise.all([capped(1), capped(2), capped(3)]);
    expect(both.filter((c) => "refused" in c)).toEqual([{ refused: "too_many" }]);
    expect((await onboardings.unfinished("acc_suite", q.t)).length).toBe(2);
    // A finished one does not count, nor an expired one.
    const [first] = await onboardings.unfinished("acc_suite", q.t);
    await onboardings.claim(first!.id, "acc_suite", q.t, q.t + 10);
    await onboardings.saveRun({ ...first!, finishedAt: q.t, expiresAt: null, leaseUntil: null }, q.t + 10);
    expect("onboarding" in (await capped(4))).toBe(true);
    expect(await capped(5)).toEqual({ refused: "too_many" });
    expect("onboarding" in (await capped(5, HOUR_LATER(q)))).toBe(true);
  });

  test("expiry: look-ups pass over an expired unfinished one and the purge deletes it; a finished one's lapsed run keeps its record, not its secrets", async () => {
    const q = await queue();
    const onboardings = q.deps.store.onboardings;
    const purge = (now: number) => q.deps.store.retention.purgeOnboardings(now, 100);
    await onboardings.create(onboarding(q), { now: q.t, numberIsTheirs: false });
    const later = onboarding(q, {
      id: "sgn_2",
      phoneNumberId: "pn_2",
      finishedAt: q.t - 5,
      accessToken: "EAAG-rerun",
      expiresAt: q.t + 2 * HOUR,
    });
    await onboardings.create(later, { now: q.t, numberIsTheirs: false });
    expect(await purge(HOUR_LATER(q) - 1)).toBe(0);
    expect((await onboardings.list({}, HOUR_LATER(q) - 1)).map((o) => o.id).sort()).toEqual(["sgn_1", "sgn_2"]);

    const now = HOUR_LATER(q);
    expect(await onboardings.get("sgn_1", now)).toBeUndefined();
    expect(await onboardings.byNumber("acc_suite", "pn_1", now)).toBeUndefined();
    expect(await onboardings.unfinished("acc_suite", now)).toEqual([]);
    expect((await onboardings.list({ accountId: "acc_suite" }, now)).map((o) => o.id)).toEqual(["sgn_2"]);
    expect(await purge(now)).toBe(1);
    expect(await q.deps.query("SELECT id FROM onboardings WHERE id = 'sgn_1'")).toEqual([]);

    const lapsed = q.t + 2 * HOUR;
    expect(await onboardings.get("sgn_2", lapsed)).toEqual({ ...later, code: null, accessToken: null, pin: null });
    expect(await purge(lapsed)).toBe(1);
    expect(await purge(lapsed)).toBe(0);
    expect(
      await q.deps.query("SELECT code_enc, access_token_enc, pin_enc, expires_at FROM onboardings WHERE id = 'sgn_2'"),
    ).toEqual([{ code_enc: null, access_token_enc: null, pin_enc: null, expires_at: lapsed }]);
  });

  test("the operator's list filters by account and number, newest first; delete answers the one deleted", async () => {
    const q = await queue();
    await account(q.deps.store, "acc_b", q.t);
    const onboardings = q.deps.store.onboardings;
    const at = { now: q.t, numberIsTheirs: false };
    await onboardings.create(onboarding(q), at);
    await onboardings.create(onboarding(q, { id: "sgn_2", phoneNumberId: "pn_2", updatedAt: q.t + 1 }), at);
    await onboardings.create(
      onboarding(q, { id: "sgn_3", accountId: "acc_b", phoneNumberId: "pn_3", updatedAt: q.t + 2 }),
      at,
    );
    const ids = async (filter: Parameters<typeof onboardings.list>[0]) =>
      (await onboardings.list(filter, q.t)).map((o) => o.id);
    expect(await ids({})).toEqual(["sgn_3", "sgn_2", "sgn_1"]);
    expect(await ids({ accountId: "acc_suite" })).toEqual(["sgn_2", "sgn_1"]);
    expect(await ids({ phoneNumberId: "pn_3" })).toEqual(["sgn_3"]);
    expect(await ids({ accountId: "acc_suite", phoneNumberId: "pn_3" })).toEqual([]);
    expect((await onboardings.delete("sgn_2"))?.id).toBe("sgn_2");
    expect(await onboardings.delete("sgn_2")).toBeUndefined();
    expect(await ids({})).toEqual(["sgn_3", "sgn_1"]);
  });
});

describe("a message's events", () => {
  test("the message ids an event mentions are indexed with it: found by account and id, oldest first, each with its deliveries", async () => {
    const q = await queue();
    const mention = (status: string) => ({
      messageId: "wamid.suite",
      phoneNumberId: "2001",
      kind: "status" as const,
      status,
      errorCode: status === "failed" ? 131026 : null,
    });
    const ids: string[] = [];
    for (const [i, status] of ["sent", "failed"].entries()) {
      const event = {
        ...eventRow(newEventId(q.deps.random, q.t + i), "acc_suite", q.t + i),
        messages: [mention(status), { ...mention("read"), messageId: "wamid.other" }],
      };
      const delivery = deliveryRow(newDeliveryId(q.deps.random, q.t + i), event, q.endpoint.id, q.t + i);
      await q.store.queue.enqueue([event], [delivery]);
      ids.push(delivery.id);
    }
    const found = await q.store.history.messageEvents("acc_suite", "wamid.suite");
    expect(found.map((e) => [e.status, e.errorCode, e.phoneNumberId, e.receivedAt])).toEqual([
      ["sent", null, "2001", q.t],
      ["failed", 131026, "2001", q.t + 1],
    ]);
    expect(found.map((e) => e.deliveries.map((d) => d.id))).toEqual([[ids[0]!], [ids[1]!]]);
    expect(await q.store.history.messageEvents("acc_other", "wamid.suite")).toEqual([]);
    expect(await q.store.history.messageEvents("acc_suite", "wamid.none")).toEqual([]);
  });
});

describe("the request log", () => {
  test("batches are written with their usage counts; a batch written again adds nothing; each account's records are its own", async () => {
    const deps = await fresh();
    const log = deps.store.requests;
    const t = deps.clock.now();
    const batch = [
      record(timeOrderedId(deps.random, "req", t, 20), "acc_a", t, { messageId: "wamid.a" }),
      record(timeOrderedId(deps.random, "req", t + 1, 20), "acc_a", t + 1, {
        status: 429,
        errorCode: 1006,
        upstreamStatus: null,
      }),
      record(timeOrderedId(deps.random, "req", t + 2, 20), "acc_b", t + 2),
    ];
    await log.append(batch);
    await log.append(batch);
    expect((await log.list("acc_a", {}, 10)).map((r) => r.id)).toEqual([batch[1]!.id, batch[0]!.id]);
    expect(await log.get("acc_a", batch[0]!.id)).toEqual(batch[0]!);
    expect(await log.get("acc_b", batch[0]!.id)).toBeUndefined();
    expect(await log.byMessageId("acc_a", "wamid.a")).toEqual([batch[0]!]);
    expect(await log.byMessageId("acc_b", "wamid.a")).toEqual([]);
    const hour = Math.floor(t / HOUR) * HOUR;
    expect((await log.usage("acc_a", hour, hour + HOUR)).map((u) => [u.kind, u.label, u.count])).toEqual([
      ["forwarded", "POST /{version}/{phone_number_id}/messages", 1],
      ["refused", "1006", 1],
    ]);
    expect(await log.usage(null, hour, hour + HOUR)).toHaveLength(3);
  });

  test("the purges keep each account's records and usage counts from its own cut-off, in batches", async () => {
    const deps = await fresh();
    const log = deps.store.requests;
    const t = deps.clock.now();
    const at = (account: string, when: number) => record(timeOrderedId(deps.random, "req", when, 20), account, when);
    const old = [at("acc_day", t - 25 * HOUR), at("acc_week", t - 25 * HOUR), at("acc_week", t - 8 * 24 * HOUR)];
    const recent = [at("acc_day", t - HOUR), at("acc_week", t - HOUR)];
    await log.append([...old, ...recent]);
    const cutoffs = (dayAgo: number, weekAgo: number) => [
      { accountId: "acc_day", before: t - dayAgo },
      { accountId: "acc_week", before: t - weekAgo },
    ];
    // A batch of one: every row still goes, a statement at a time.
    expect(await log.purgeRecords(cutoffs(24 * HOUR, 7 * 24 * HOUR), 1)).toBe(2);
    expect(await log.purgeRecords(cutoffs(24 * HOUR, 7 * 24 * HOUR), 1)).toBe(0);
    // The week-old call's usage hour went with it; the 25-hour-old ones' hours are kept.
    expect(await log.purgeUsage(cutoffs(2 * 24 * HOUR, 2 * 24 * HOUR), 1)).toBe(1);
    expect((await log.list("acc_day", {}, 10)).map((r) => r.id)).toEqual([recent[0]!.id]);
    expect((await log.list("acc_week", {}, 10)).map((r) => r.id)).toEqual([recent[1]!.id, old[1]!.id]);
    expect(await log.usage(null, 0, t + HOUR)).toHaveLength(4);
  });
});

describe("endpoints", () => {
  test("targets and what an attempt reads follow every change at once: create, update, a 410's disable, deletion", async () => {
    const q = await queue();
    const { store, endpoint } = q;
    expect(store.endpoints.targets("acc_suite")).toEqual([
      { id: endpoint.id, fields: ["messages"], phoneNumberId: null, signature: "standard" },
    ]);
    expect(await store.endpoints.forDelivery(endpoint.id)).toMatchObject({
      url: endpoint.url,
      enabled: true,
      secret: endpoint.secret,
    });
    const secret = "whsec_bmV3c2VjcmV0bmV3c2VjcmV0bmV3c2VjcmV0";
    await store.endpoints.update(endpoint.id, {
      url: "https://receiver.example/moved",
      secret,
      fields: ["messages", "security"],
      updatedAt: q.t,
    });
    expect(store.endpoints.targets("acc_suite")[0]!.fields).toEqual(["messages", "security"]);
    expect(await store.endpoints.forDelivery(endpoint.id)).toMatchObject({
      url: "https://receiver.example/moved",
      secret,
    });

    await attemptAt(q, q.t, 410, gone);
    expect(await store.endpoints.get(endpoint.id)).toMatchObject({
      enabled: false,
      disabledReason: "gone",
      consecutiveFailures: 1,
    });
    expect((await store.endpoints.forDelivery(endpoint.id))?.enabled).toBe(false);

    const second = endpointRow("ep_suite_2", "acc_suite", q.t + 1);
    await store.endpoints.create(second);
    expect(store.endpoints.targets("acc_suite").map((t) => t.id)).toEqual([endpoint.id, second.id]);
    expect((await store.endpoints.ofAccount("acc_suite")).map((e) => e.id)).toEqual([endpoint.id, second.id]);
    expect(await store.endpoints.delete(endpoint.id)).toBe(true);
    expect(await store.endpoints.forDelivery(endpoint.id)).toBeUndefined();
    expect(await store.endpoints.get(endpoint.id)).toBeUndefined();
    expect(store.endpoints.targets("acc_suite").map((t) => t.id)).toEqual([second.id]);
    expect(await q.deps.query("SELECT COUNT(*) AS n FROM deliveries")).toEqual([{ n: 0 }]);
    expect(await q.deps.query("SELECT COUNT(*) AS n FROM events")).toEqual([{ n: 0 }]);
    expect(await store.endpoints.delete(endpoint.id)).toBe(false);
  });
});

describe("the queue's claims", () => {
  test("endpoints with the oldest due work first, each endpoint's deliveries oldest first; nothing before it is due", async () => {
    const q = await queue();
    const other = endpointRow("ep_suite_b", "acc_suite", q.t);
    await q.store.endpoints.create(other);
    const a1 = await q.due(q.t + 20);
    const b1 = await q.due(q.t + 10, other.id);
    const a2 = await q.due(q.t + 30);
    const b2 = await q.due(q.t + 40, other.id);
    const later = await q.due(q.t + 1_000);
    expect(await q.claim(q.t + 5)).toEqual([]);
    const claimed = await q.claim(q.t + 100);
    expect(claimed.map((c) => c.delivery.id)).toEqual([b1, b2, a1, a2]);
    expect(claimed[0]).toMatchObject({
      leaseId: "lease_2",
      endpoint: { id: other.id, url: other.url, secret: other.secret },
      upstreamSignature: null,
    });
    expect(new TextDecoder().decode(claimed[0]!.body!)).toBe("{}");
    expect(claimed[0]!.delivery).toMatchObject({
      status: "pending",
      attemptCount: 0,
      nextAttemptAt: q.t + 100 + 70_000,
      fields: ["messages"],
      isTest: false,
      payloadAvailable: true,
    });
    expect((await q.claim(q.t + 2_000)).map((c) => c.delivery.id)).toEqual([later]);
  });

  test("never more than perEndpoint live leases per endpoint, counting earlier claims; the limit counts across endpoints", async () => {
    const q = await queue();
    const other = endpointRow("ep_suite_b", "acc_suite", q.t);
    await q.store.endpoints.create(other);
    for (let i = 0; i < 15; i++) await q.due(q.t + i);
    for (let i = 0; i < 5; i++) await q.due(q.t + i, other.id);
    const now = q.t + 100;
    expect(await q.claim(now, { limit: 4 })).toHaveLength(4);
    const next = await q.claim(now);
    expect(next.filter((c) => c.endpoint.id === q.endpoint.id)).toHaveLength(6);
    expect(next.filter((c) => c.endpoint.id === other.id)).toHaveLength(5);
    expect(await q.claim(now)).toEqual([]);
    // A completion frees a slot; one more is claimed, no more.
    const done = next.find((c) => c.endpoint.id === q.endpoint.id)!;
    await q.store.queue.completeAttempt(
      firstAttempt(done.delivery.id, q.endpoint.id, now, 200, succeeded, done.leaseId),
    );
    expect(await q.claim(now)).toHaveLength(1);
    expect(await q.claim(now)).toEqual([]);
    expect(await q.store.queue.pendingCount()).toBe(19);
  });

  test("an endpoint at its cap does not hold up the others, however old its backlog", async () => {
    const q = await queue();
    const other = endpointRow("ep_suite_b", "acc_suite", q.t);
    await q.store.endpoints.create(other);
    for (let i = 0; i < 12; i++) await q.due(q.t + i);
    expect(await q.claim(q.t + 100, { limit: 10 })).toHaveLength(10);
    const newer = await q.due(q.t + 50, other.id);
    // The busy endpoint's two left are older, but it has no room: a claim of one takes the other's.
    expect((await q.claim(q.t + 100, { limit: 1 })).map((c) => c.delivery.id)).toEqual([newer]);
  });

  test("a claim stops before its bodies pass maxBytes (the first always goes), and an event's deliveries share one copy of its body", async () => {
    const q = await queue();
    const at = q.t;
    const second = endpointRow("ep_suite_2", "acc_suite", at);
    await q.store.endpoints.create(second);
    const events = [1, 2, 3].map((i) =>
      eventRow(newEventId(q.deps.random, at + i), "acc_suite", at + i, new Uint8Array(1000).fill(i)),
    );
    await q.store.queue.enqueue(
      events,
      events.flatMap((e, i) =>
        [q.endpoint.id, second.id].map((to) => deliveryRow(newDeliveryId(q.deps.random, at + i), e, to, at + i)),
      ),
    );
    expect(await q.claim(at + 10, { maxBytes: 2500 })).toHaveLength(2);
    expect(await q.claim(at + 10, { maxBytes: 10 })).toHaveLength(1);
    const rest = await q.claim(at + 10);
    expect(rest).toHaveLength(3);
    const shared = rest.filter((c) =>
      rest.some((other) => other !== c && other.delivery.eventId === c.delivery.eventId),
    );
    expect(shared).toHaveLength(2);
    expect(shared[0]!.body).toBe(shared[1]!.body!);
    expect(shared[0]!.body).toEqual(new Uint8Array(1000).fill(shared[0]!.body![0]!));
  });
});

describe("leases", () => {
  test("a lease that runs out with no attempt recorded makes its delivery claimable again, under a new lease id", async () => {
    const q = await queue();
    const id = await q.due(q.t);
    expect((await q.claim(q.t + 1)).map((c) => c.delivery.id)).toEqual([id]);
    expect(await q.claim(q.t + 1 + 69_999)).toEqual([]);
    expect((await q.store.history.delivery(id))?.nextAttemptAt).toBe(q.t + 1 + 70_000);
    const [again] = await q.claim(q.t + 1 + 70_000, { leaseId: "lease_again" });
    expect(again).toMatchObject({ leaseId: "lease_again", delivery: { id, attemptCount: 0 } });
    expect(await q.store.queue.pendingCount()).toBe(1);
  });

  test("an attempt's record is kept only under the lease that holds the delivery: a stale holder changes nothing", async () => {
    const q = await queue();
    const id = await q.due(q.t);
    const [first] = await q.claim(q.t);
    await q.claim(q.t + 71_000, { leaseId: "lease_new" });
    // The stale holder's answer (a 500) comes in late: nothing of it is recorded.
    const stale = await q.store.queue.completeAttempt(
      firstAttempt(id, q.endpoint.id, q.t + 72_000, 500, failed(q.t + 72_000), first!.leaseId),
    );
    expect(stale).toEqual({ consecutiveFailures: 0, warned: false, disabled: null });
    expect(await q.store.history.attempts(id)).toEqual([]);
    expect(await q.store.history.delivery(id)).toMatchObject({ status: "pending", attemptCount: 0 });
    expect((await q.store.endpoints.get(q.endpoint.id))?.consecutiveFailures).toBe(0);
    await q.store.queue.completeAttempt(firstAttempt(id, q.endpoint.id, q.t + 72_001, 200, succeeded, "lease_new"));
    expect(await q.store.history.delivery(id)).toMatchObject({
      status: "succeeded",
      attemptCount: 1,
      nextAttemptAt: null,
    });
    expect(await q.store.history.attempts(id)).toEqual([
      { number: 1, at: q.t + 72_001, statusCode: 200, error: null, responseExcerpt: "", durationMs: 1 },
    ]);
  });

  test("a delivery deleted while its attempt ran gets nothing recorded", async () => {
    const q = await queue();
    const id = await q.due(q.t);
    const [claimed] = await q.claim(q.t);
    await q.store.endpoints.delete(q.endpoint.id);
    expect(
      await q.store.queue.completeAttempt(firstAttempt(id, q.endpoint.id, q.t, 500, failed(q.t), claimed!.leaseId)),
    ).toEqual({ consecutiveFailures: 0, warned: false, disabled: null });
    expect(await q.store.history.delivery(id)).toBeUndefined();
  });
});

describe("instances", () => {
  test("an instance beats: a lone one is neither taken for dead nor sharing its id; another over the database is listed with its beats counted (a shared backend), until it leaves", async () => {
    const deps = await fresh();
    const other = await deps.anotherStore();
    const t = deps.clock.now();
    expect(await deps.store.instances.beat(t)).toEqual({ others: [], takenForDead: false, shared: false });
    await other.instances.beat(t + 1);
    await other.instances.beat(t + 2);
    // One server holds a SQLite file: there is no other instance to list.
    const listed = deps.store.queue.soleWorker
      ? []
      : [{ id: other.instances.self, startedAt: t + 1, beatAt: t + 2, beats: 2 }];
    expect(await deps.store.instances.beat(t + 1_000)).toEqual({ others: listed, takenForDead: false, shared: false });
    await other.instances.leave();
    expect((await deps.store.instances.beat(t + 2_000)).others).toEqual([]);
  });

  test("a restarted instance takes back the leases its earlier run held: they are claimable again at once, under a new lease", async () => {
    const deps = await fresh({ INSTANCE_ID: "inst_suite" });
    const t = deps.clock.now();
    await account(deps.store, "acc_suite", t);
    const endpoint = endpointRow("ep_suite", "acc_suite", t);
    await deps.store.endpoints.create(endpoint);
    const event = eventRow(newEventId(deps.random, t), "acc_suite", t);
    const delivery = deliveryRow(newDeliveryId(deps.random, t), event, endpoint.id, t);
    await deps.store.queue.enqueue([event], [delivery]);
    const claim = (leaseId: string) =>
      deps.store.queue.claimDue(t + 1, { leaseId, limit: 10, perEndpoint: 10, leaseMs: 70_000, maxBytes: EVERYTHING });
    expect((await claim("lease_before")).map((c) => c.delivery.id)).toEqual([delivery.id]);
    await deps.reopenStore();
    expect(deps.store.instances.self).toBe("inst_suite");
    // Its lease runs for 70 s yet: only the restart's recovery makes it claimable now.
    expect(await claim("lease_early")).toEqual([]);
    await deps.store.queue.recoverLeases(t + 1);
    expect(await claim("lease_after")).toMatchObject([{ leaseId: "lease_after", delivery: { id: delivery.id } }]);
  });
});

describe("completions and endpoint health (docs/webhooks.md#endpoint-health-and-disabling)", () => {
  test("a failure schedules the next attempt; 20 in a row warn once; 50 with no success in 24 hours disable; a success resets", async () => {
    const q = await queue();
    const { change: first } = await attemptAt(q, q.t, 500, failed(q.t));
    expect(first).toEqual({ consecutiveFailures: 1, warned: false, disabled: null });
    const changes = [];
    for (let n = 2; n <= FAILURE_RULES.disableAt; n++)
      changes.push((await attemptAt(q, q.t + n, 500, failed(q.t))).change);
    expect(changes.filter((c) => c.warned).map((c) => c.consecutiveFailures)).toEqual([FAILURE_RULES.warnAt]);
    expect(changes.at(-1)).toEqual({
      consecutiveFailures: FAILURE_RULES.disableAt,
      warned: false,
      disabled: "consecutive_failures",
    });
    expect(await q.store.endpoints.get(q.endpoint.id)).toMatchObject({
      enabled: false,
      disabledReason: "consecutive_failures",
      warnedAt: q.t + FAILURE_RULES.warnAt,
    });
    expect(q.store.endpoints.targets("acc_suite")).toHaveLength(1);
    await q.store.endpoints.update(q.endpoint.id, {
      enabled: true,
      disabledReason: null,
      consecutiveFailures: 0,
      warnedAt: null,
      updatedAt: q.t + 100,
    });
    await attemptAt(q, q.t + 101, 500, failed(q.t + 101));
    await attemptAt(q, q.t + 102, 200, succeeded);
    expect(await q.store.endpoints.get(q.endpoint.id)).toMatchObject({
      enabled: true,
      consecutiveFailures: 0,
      lastSuccessAt: q.t + 102,
      warnedAt: null,
    });
  });

  test("completions recorded together apply in order: a success between failures resets the count", async () => {
    const q = await queue();
    const ids = [await q.due(q.t), await q.due(q.t + 1), await q.due(q.t + 2)];
    const claimed = await q.claim(q.t + 10);
    const results = [failed(q.t), succeeded, failed(q.t)] as const;
    const changes = await Promise.all(
      claimed.map((c, i) =>
        q.store.queue.completeAttempt(
          firstAttempt(ids[i]!, q.endpoint.id, q.t + 20 + i, i === 1 ? 200 : 500, results[i]!, c.leaseId),
        ),
      ),
    );
    expect(changes.map((c) => c.consecutiveFailures)).toEqual([1, 0, 1]);
    expect(await q.store.endpoints.get(q.endpoint.id)).toMatchObject({
      consecutiveFailures: 1,
      lastSuccessAt: q.t + 21,
    });
  });

  test(`last_success_at is kept to ${LAST_SUCCESS_RESOLUTION_MS} ms, but a success after a failure is always recorded`, async () => {
    const q = await queue();
    const t = q.t;
    await attemptAt(q, t, 200, succeeded);
    expect((await q.store.endpoints.get(q.endpoint.id))?.lastSuccessAt).toBe(t);
    await attemptAt(q, t + LAST_SUCCESS_RESOLUTION_MS - 1, 200, succeeded);
    expect((await q.store.endpoints.get(q.endpoint.id))?.lastSuccessAt).toBe(t);
    await attemptAt(q, t + LAST_SUCCESS_RESOLUTION_MS, 200, succeeded);
    expect((await q.store.endpoints.get(q.endpoint.id))?.lastSuccessAt).toBe(t + LAST_SUCCESS_RESOLUTION_MS);
    await attemptAt(q, t + LAST_SUCCESS_RESOLUTION_MS + 1, 500, failed(t));
    expect((await q.store.endpoints.get(q.endpoint.id))?.consecutiveFailures).toBe(1);
    await attemptAt(q, t + LAST_SUCCESS_RESOLUTION_MS + 2, 200, succeeded);
    expect(await q.store.endpoints.get(q.endpoint.id)).toMatchObject({
      consecutiveFailures: 0,
      lastSuccessAt: t + LAST_SUCCESS_RESOLUTION_MS + 2,
    });
  });

  test("the 24-hour quiet window is widened by that precision, so an endpoint is never disabled early", async () => {
    const q = await queue();
    const t = q.t;
    await attemptAt(q, t, 200, succeeded);
    for (let n = 1; n < FAILURE_RULES.disableAt; n++) await attemptAt(q, t + n, 500, failed(t));
    const windowEnd = t + FAILURE_RULES.quietMs + LAST_SUCCESS_RESOLUTION_MS;
    await attemptAt(q, windowEnd - 1, 500, failed(t));
    expect(await q.store.endpoints.get(q.endpoint.id)).toMatchObject({
      enabled: true,
      consecutiveFailures: FAILURE_RULES.disableAt,
    });
    await attemptAt(q, windowEnd, 500, failed(t));
    expect(await q.store.endpoints.get(q.endpoint.id)).toMatchObject({
      enabled: false,
      disabledReason: "consecutive_failures",
    });
  });

  test("a history payload dropped on success is gone once no pending delivery needs it", async () => {
    const q = await queue();
    const second = endpointRow("ep_suite_2", "acc_suite", q.t);
    await q.store.endpoints.create(second);
    const event = eventRow(newEventId(q.deps.random, q.t), "acc_suite", q.t);
    const [d1, d2] = [q.endpoint.id, second.id].map((to) =>
      deliveryRow(newDeliveryId(q.deps.random, q.t), event, to, q.t),
    );
    await q.store.queue.enqueue([event], [d1!, d2!]);
    const claimed = await q.claim(q.t);
    const lease = (id: string) => claimed.find((c) => c.delivery.id === id)!.leaseId;
    await q.store.queue.completeAttempt({
      ...firstAttempt(d1!.id, q.endpoint.id, q.t, 200, succeeded, lease(d1!.id)),
      deletePayload: true,
    });
    expect(await q.store.history.delivery(d1!.id)).toMatchObject({ status: "succeeded", payloadAvailable: false });
    expect(await q.store.history.eventBody(event.id)).not.toBeNull();
    await q.store.queue.completeAttempt({
      ...firstAttempt(d2!.id, second.id, q.t, 410, gone, lease(d2!.id)),
      deletePayload: true,
    });
    expect(await q.store.history.delivery(d2!.id)).toMatchObject({
      status: "parked",
      parkedReason: "gone",
      payloadAvailable: false,
    });
    expect(await q.store.history.eventBody(event.id)).toBeNull();
  });
});

describe("history", () => {
  test("deliveries are listed newest first by account, endpoint and status, and paged by a keyset cursor", async () => {
    const q = await queue();
    const { store, endpoint } = q;
    const other = endpointRow("ep_suite_b", "acc_suite", q.t);
    await store.endpoints.create(other);
    const { id: ok } = await attemptAt(q, q.t + 2, 200, succeeded);
    const { id: parked } = await attemptAt(q, q.t + 3, 410, gone);
    const due = await q.due(q.t + 1);
    const elsewhere = await q.due(q.t + 4, other.id);
    const list = (
      status?: "pending" | "parked" | "succeeded",
      endpointId?: string,
      limit = 10,
      before?: { createdAt: number; id: string },
    ) =>
      store.history
        .deliveries({ accountId: "acc_suite", endpointId, status, limit, before })
        .then((all) => all.map((d) => d.id));
    expect(await list()).toEqual([elsewhere, parked, ok, due]);
    expect(await list(undefined, endpoint.id)).toEqual([parked, ok, due]);
    expect(await list("pending")).toEqual([elsewhere, due]);
    expect(await list("parked")).toEqual([parked]);
    expect(await list("succeeded")).toEqual([ok]);
    expect(await list(undefined, undefined, 2)).toEqual([elsewhere, parked]);
    expect(await list(undefined, undefined, 2, { createdAt: q.t + 3, id: parked })).toEqual([ok, due]);
    expect(await store.history.deliveries({ accountId: "acc_other", limit: 10 })).toEqual([]);
  });

  test("each attempt and park is counted in its hour; hours wholly past the account's retention are purged", async () => {
    const q = await queue();
    const start = Math.floor(q.t / HOUR) * HOUR;
    q.deps.clock.set(start);
    const counts = async (now: number) =>
      (await q.store.history.hourlyStats(q.endpoint.id, start, now)).map((s) => [s.succeeded, s.failed, s.parked]);
    await attemptAt(q, start + 10, 200, succeeded);
    await attemptAt(q, start + 20, 500, failed(start + 20));
    await attemptAt(q, start + HOUR + 5, 410, gone);
    expect(await counts(start + 2 * HOUR)).toEqual([
      [1, 1, 0],
      [0, 1, 1],
      [0, 0, 0],
    ]);
    await q.store.retention.purgeWebhookHistory(start + 25 * HOUR - 1, RETENTION, 100);
    expect(await counts(start + 2 * HOUR)).toEqual([
      [1, 1, 0],
      [0, 1, 1],
      [0, 0, 0],
    ]);
    await q.store.retention.purgeWebhookHistory(start + 25 * HOUR, RETENTION, 100);
    expect(await counts(start + 2 * HOUR)).toEqual([
      [0, 0, 0],
      [0, 1, 1],
      [0, 0, 0],
    ]);
  });

  test("the purge deletes deliveries past their account's retention with their attempts, and the events none refers to", async () => {
    const q = await queue();
    const week = await account(q.deps.store, "acc_week", q.t);
    await q.deps.store.directory.updateAccount(week.id, { retention: "7d" });
    const kept = endpointRow("ep_week", week.id, q.t);
    await q.store.endpoints.create(kept);
    for (let i = 0; i < 3; i++) await attemptAt(q, q.t + i, 200, succeeded);
    const event = eventRow(newEventId(q.deps.random, q.t), week.id, q.t);
    await q.store.queue.enqueue([event], [deliveryRow(newDeliveryId(q.deps.random, q.t), event, kept.id, q.t)]);
    expect(await q.store.retention.purgeWebhookHistory(q.t + 24 * HOUR, RETENTION, 100)).toEqual({
      deliveries: 0,
      events: 0,
    });
    // Batches of two: the third delivery goes in a second one.
    expect(await q.store.retention.purgeWebhookHistory(q.t + 25 * HOUR, RETENTION, 2)).toEqual({
      deliveries: 3,
      events: 3,
    });
    expect(await q.deps.query("SELECT COUNT(*) AS n FROM attempts")).toEqual([{ n: 0 }]);
    expect(await q.store.queue.pendingCount()).toBe(1);
    expect(await q.store.retention.purgeWebhookHistory(q.t + 8 * 24 * HOUR, RETENTION, 100)).toEqual({
      deliveries: 1,
      events: 1,
    });
    expect(await q.store.queue.pendingCount()).toBe(0);
  });
});

describe("dashboard logins", () => {
  test("a session opened is the user's last sign-in; a new password ends their sessions but the one kept, a removal all", async () => {
    const q = await queue();
    const { store } = q.deps;
    const user = (id: string, email: string) =>
      store.users.create({ id, accountId: "acc_suite", email, passwordHash: "old", createdAt: q.t });
    expect(await user("usr_1", "one@example.com")).toMatchObject({ lastSignInAt: null });
    await user("usr_2", "two@example.com");
    const session = (tokenHash: string, userId: string, at: number) =>
      store.sessions.create({ tokenHash, userId, accountId: "acc_suite", createdAt: at, expiresAt: at + HOUR });
    await session("a", "usr_1", q.t + 1);
    await session("b", "usr_1", q.t + 2);
    await session("c", "usr_1", q.t + 3);
    await session("d", "usr_2", q.t + 4);
    expect(await store.users.byId("usr_1")).toMatchObject({ lastSignInAt: q.t + 3 });

    expect(await store.users.setPasswordHash("usr_1", "new", undefined, "b")).toBe(true);
    expect(await store.users.byId("usr_1")).toMatchObject({ passwordHash: "new" });
    expect([await store.sessions.find("a"), await store.sessions.find("c")]).toEqual([undefined, undefined]);
    expect(await store.sessions.find("b")).toMatchObject({ userId: "usr_1" });
    expect(await store.sessions.find("d")).toMatchObject({ userId: "usr_2" });
    // "all": the demo's restarts keep every session.
    expect(await store.users.setPasswordHash("usr_1", "demo", undefined, "all")).toBe(true);
    expect(await store.sessions.find("b")).toMatchObject({ userId: "usr_1" });
    expect(await store.users.setPasswordHash("usr_1", "newer")).toBe(true);
    expect(await store.sessions.find("b")).toBeUndefined();
    expect(await store.users.setPasswordHash("usr_nobody", "x")).toBe(false);

    expect(await store.users.delete("usr_2")).toBe(true);
    expect(await store.users.byId("usr_2")).toBeUndefined();
    expect(await store.sessions.find("d")).toBeUndefined();
    expect(await store.users.delete("usr_2")).toBe(false);
    expect((await store.users.ofAccount("acc_suite")).map((u) => u.id)).toEqual(["usr_1"]);
  });
});

describe("retention purges", () => {
  test("sessions go at their expiry, a batch at a time; the live ones stay", async () => {
    const q = await queue();
    const { store } = q.deps;
    await store.users.create({
      id: "usr_1",
      accountId: "acc_suite",
      email: "u@example.com",
      passwordHash: "x",
      createdAt: q.t,
    });
    const session = (tokenHash: string, expiresAt: number) =>
      store.sessions.create({ tokenHash, userId: "usr_1", accountId: "acc_suite", createdAt: q.t, expiresAt });
    for (const [hash, at] of [
      ["s1", q.t],
      ["s2", q.t],
      ["s3", q.t + 1],
    ] as const)
      await session(hash, at);
    expect(await store.retention.purgeSessions(q.t - 1, 1)).toBe(0);
    expect(await store.retention.purgeSessions(q.t, 1)).toBe(2);
    expect(await store.sessions.find("s1")).toBeUndefined();
    expect(await store.sessions.find("s3")).toMatchObject({ expiresAt: q.t + 1 });
    expect(await store.retention.purgeSessions(q.t, 1)).toBe(0);
  });

  test("sign-in attempts: counted on every counter or none, in windows fixed or restarting at each, given back, forgotten, purged", async () => {
    const q = await queue();
    const { signIns, retention } = q.deps.store;
    const W = 1000;
    const email = { key: "email", limit: 2, sliding: true };
    const address = { key: "address", limit: 3, sliding: false };
    const t = q.t;
    expect(await signIns.reserve([email, address], t, W)).toEqual({ held: true, since: [t, t] });
    expect(await signIns.reserve([email, address], t + 10, W)).toEqual({ held: true, since: [t + 10, t] });
    // The email's is full until a window after its last attempt; the address's was not counted.
    expect(await signIns.reserve([email, address], t + 20, W)).toEqual({ held: false, retryAt: t + 10 + W });
    const other = { ...email, key: "other" };
    expect(await signIns.reserve([other, address], t + 30, W)).toEqual({ held: true, since: [t + 30, t] });
    // The address's is full now: the other email's attempt is not counted either.
    expect(await signIns.reserve([{ ...email, key: "third" }, address], t + 40, W)).toEqual({
      held: false,
      retryAt: t + W,
    });
    expect((await q.deps.query("SELECT key FROM sign_in_counts ORDER BY key")).map((r) => r.key)).toEqual([
      "address",
      "email",
      "other",
    ]);
    // A given-back attempt frees a place in its own window only.
    await signIns.giveBack("address", t - 1);
    expect((await signIns.reserve([address], t + 50, W)).held).toBe(false);
    await signIns.giveBack("address", t);
    expect(await signIns.reserve([address], t + 60, W)).toEqual({ held: true, since: [t] });
    // The address's window ends a window after its first attempt, and starts again at one.
    expect(await signIns.reserve([address], t + W, W)).toEqual({ held: true, since: [t + W] });
    await signIns.forget("other");
    expect(await signIns.reserve([other], t + W, W)).toEqual({ held: true, since: [t + W] });
    expect(await retention.purgeSignInCounts(t + 11, 1)).toBe(1);
    expect((await q.deps.query("SELECT key FROM sign_in_counts ORDER BY key")).map((r) => r.key)).toEqual([
      "address",
      "other",
    ]);
  });

  test("finished recovers go after their account's retention, counted from their last progress; a running one stays", async () => {
    const q = await queue();
    const { store } = q.deps;
    await account(store, "acc_week", q.t);
    await store.directory.updateAccount("acc_week", { retention: "7d" });
    await store.endpoints.create(endpointRow("ep_week", "acc_week", q.t));
    const job = (id: string, accountId: string, endpointId: string, status: "running" | "done") => ({
      id,
      accountId,
      endpointId,
      since: q.t - HOUR,
      until: q.t,
      status,
      found: 0,
      replayed: 0,
      skippedExpired: 0,
      skippedReplayed: 0,
      cursor: null,
      startedAt: q.t - 1,
      updatedAt: q.t,
    });
    // One finished recover per endpoint is stored before a new one may start there.
    await store.recoveries.start(job("rcv_day", "acc_suite", q.endpoint.id, "done"));
    await store.recoveries.start(job("rcv_running", "acc_suite", q.endpoint.id, "running"));
    await store.recoveries.start(job("rcv_week", "acc_week", "ep_week", "done"));
    const ids = async () => (await q.deps.query("SELECT id FROM recoveries ORDER BY id")).map((r) => r.id);
    expect(await store.retention.purgeRecoveries(q.t + 24 * HOUR, RETENTION, 1)).toBe(0);
    expect(await store.retention.purgeRecoveries(q.t + 24 * HOUR + 1, RETENTION, 1)).toBe(1);
    expect(await ids()).toEqual(["rcv_running", "rcv_week"]);
    expect(await store.retention.purgeRecoveries(q.t + 30 * 24 * HOUR, RETENTION, 1)).toBe(1);
    expect(await ids()).toEqual(["rcv_running"]);
  });
});
