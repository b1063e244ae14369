import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { startSimulator } from "../../src/simulator/server.ts";
import { testBackend } from "../support/backend.ts";
import { eventBody, messageChange, postUpstream, relayAccount } from "../webhooks/support.ts";
import { type Arrival, countingReceiver, type Instance, scaleOut, until } from "./instances.ts";

// docs/operations.md#scale-out under chaos: two instances, a steady stream of events and a busy
// loop beside them (2 cores), each instance killed with SIGKILL in turn, 10 times, and started
// again. Every acknowledged event is delivered; none is delivered again once its success was
// recorded; each dead instance's in-flight attempts are attempted again within 10 s of its death
// (measured per kill, and printed). Only on the PostgreSQL pass.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const KILLS = 10;
/** How long the receiver takes to answer: long enough that each instance has attempts in flight at any moment. */
const ANSWER_MS = 300;

describe.skipIf(testBackend() !== "postgres")("chaos: two instances killed in turn under a stream of events", () => {
  test("every acknowledged event delivered, none again after its recorded success, each kill's in-flight attempts retried within 10 s", async () => {
    const busy = Bun.spawn([process.execPath, "-e", "for (;;) {}"], { stdout: "ignore", stderr: "ignore" });
    cleanups.push(async () => {
      busy.kill("SIGKILL");
      await busy.exited;
    });
    const sim = startSimulator();
    cleanups.push(() => sim.stop());
    // Beats 4 times a second, taken for dead after a second of silence: the 10 kills fit in CI's time.
    const cluster = await scaleOut({
      UPSTREAM_URL: sim.url,
      INSTANCE_HEARTBEAT_MS: "250",
      INSTANCE_DEAD_AFTER_MS: "1000",
    });
    cleanups.push(() => cluster.stop());
    const rx = countingReceiver(ANSWER_MS);
    cleanups.push(() => rx.stop());
    const live: Instance[] = [await cluster.start(), await cluster.start()];
    const account = await relayAccount(live[0]!.url);
    await account.endpoint(rx.url("/chaos"));
    await until(async () => {
      const change = messageChange(account.numbers[0]!, "warm-up");
      await postUpstream(live[1]!.url, eventBody([{ id: account.wabaId, changes: [change] }]));
      return (rx.seen.get("/chaos")?.length ?? 0) > 0;
    }, "both instances to know the endpoint");

    // The stream: an event every 20 ms, to each live instance in turn; acknowledged ones are counted.
    const acknowledged = new Set<string>();
    let streaming = true;
    const stream = (async () => {
      for (let i = 0; streaming; i++) {
        const target = live[i % live.length];
        const change = messageChange(account.numbers[0]!, `chaos ${i}`);
        const id = (change.value.messages[0] as { id: string }).id;
        const answer = target
          ? await postUpstream(target.url, eventBody([{ id: account.wabaId, changes: [change] }])).catch(() => null)
          : null;
        if (answer?.status === 200) acknowledged.add(id);
        await Bun.sleep(20);
      }
    })();

    const recoveries: number[] = [];
    // The in-flight cap is the endpoint's, across instances: at a kill the victim may hold none of
    // its slots. Such a kill tests no recovery; it is counted apart and another follows.
    let idleKills = 0;
    for (let kill = 0; recoveries.length < KILLS && kill < 3 * KILLS; kill++) {
      await Bun.sleep(600);
      const victim = live[kill % 2]!;
      const before = rx.arrivals.length;
      victim.kill();
      await victim.exited;
      const died = performance.now();
      // Its attempts in flight: the ones whose connection closed unanswered when it died.
      await Bun.sleep(100);
      const orphans = rx.arrivals
        .slice(0, before)
        .filter((a: Arrival) => a.answeredAt === null && a.abortedAt !== null && a.abortedAt >= died - 50);
      // The premise: the kill landed while it had attempts in flight, before the receiver answered them.
      if (orphans.length === 0) {
        idleKills++;
        live[kill % 2] = await cluster.start({}, victim.port);
        continue;
      }
      const retried = (o: Arrival) => rx.arrivals.find((a) => a.webhookId === o.webhookId && a.at > died);
      await until(() => orphans.every(retried), `kill ${kill + 1}'s orphans to be attempted again`, 15_000);
      const recovery = Math.max(...orphans.map((o) => retried(o)!.at - died));
      recoveries.push(Math.round(recovery));
      live[kill % 2] = await cluster.start({}, victim.port);
    }
    streaming = false;
    await stream;
    console.log(
      `chaos: recovery after each of ${KILLS} kills with attempts in flight (ms): ${recoveries.join(", ")}; ${idleKills} kills with none; ${acknowledged.size} events acknowledged`,
    );
    expect(recoveries).toHaveLength(KILLS);
    for (const ms of recoveries) expect(ms).toBeLessThanOrEqual(10_000);

    // Every acknowledged event delivered (answered 200 at least once).
    const delivered = () => new Set((rx.seen.get("/chaos") ?? []).filter((id) => acknowledged.has(id)));
    await until(() => delivered().size === acknowledged.size, "every acknowledged event", 30_000);
    expect(delivered().size).toBe(acknowledged.size);

    // None delivered again after its success was recorded: no request for a delivery started after
    // the end of the attempt recorded as its success.
    const db = new SQL({ url: cluster.databaseUrl, max: 1 });
    const succeeded = (await db.unsafe(
      "SELECT delivery_id, (at + duration_ms)::float8 AS ended FROM attempts WHERE status_code = 200",
    )) as { delivery_id: string; ended: number }[];
    await db.close();
    const endedAt = new Map(succeeded.map((row) => [row.delivery_id, row.ended]));
    const late = rx.arrivals.filter((a) => a.wallAt > (endedAt.get(a.webhookId) ?? Number.POSITIVE_INFINITY));
    expect(late).toEqual([]);
  }, 240_000);
});
