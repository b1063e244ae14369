// The retention worker forgets instances that stopped beating a day ago (docs/operations.md#retention),
// on the injected clock. Instances beat only on PostgreSQL; on SQLite the policy removes nothing
// (retention.test.ts counts it with the others).
import { afterEach, describe, expect, test } from "bun:test";
import { onSqlite } from "../support/backend.ts";
import { startApp, testDeps } from "../support/harness.ts";
import { DAY } from "./support.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(onSqlite)("instances gone for a day", () => {
  test("are forgotten by the retention worker a day after their last beat, not a millisecond before; a live one stays", async () => {
    const deps = await testDeps();
    cleanups.push(deps.cleanup);
    const server = startApp(deps);
    cleanups.push(server.stop);
    const now = deps.clock.now();
    await deps.store.instances.beat(now);
    // Instances that died with no other alive to take them for dead (their rows as they left them).
    await deps.query(
      `INSERT INTO instances (id, incarnation, started_at, beat_at, beats) VALUES
        ('gone-long', 'inc_a', ${now - 3 * DAY}, ${now - DAY - 1}, 40),
        ('gone-a-day', 'inc_b', ${now - 2 * DAY}, ${now - DAY}, 7)`,
    );
    const ids = async () => (await deps.query("SELECT id FROM instances ORDER BY id")).map((r) => r.id);
    const instancesPolicy = async () => (await server.app.retention.run()).find((r) => r.policy === "instances");

    expect(await instancesPolicy()).toEqual({ policy: "instances", removed: 1 });
    expect(await ids()).toEqual(["gone-a-day", deps.store.instances.self].sort());

    deps.clock.advance(1);
    await deps.store.instances.beat(deps.clock.now());
    expect(await instancesPolicy()).toEqual({ policy: "instances", removed: 1 });
    expect(await ids()).toEqual([deps.store.instances.self]);
    expect(await (await fetch(`${server.url}/metrics`)).text()).toContain(
      'switchboard_retention_removed_rows_total{policy="instances"} 2\n',
    );
  });
});
