import { afterEach, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { eventBody, messageChange, relayApp, type RelayApp } from "./support.ts";

// Issue 19, item 6: bulk recover of an endpoint's parked deliveries: 120 parked (3 of them
// history events whose payloads were deleted when they parked), replayed in the background with
// progress, asked twice without anything replayed twice.

let app: RelayApp;
afterEach(() => app?.close());

interface RecoveryJson {
  id: string;
  status: string;
  found: number;
  replayed: number;
  skipped_expired: number;
  skipped_replayed: number;
}

test("replays every parked delivery since a time once, skipping payloads already gone; a second request replays nothing twice", async () => {
  app = await relayApp();
  app.deps.clock.set(Date.now());
  const a = await app.account();
  let answer = 410;
  const rx = app.receiver(() => new Response("", { status: answer }));
  const ep = await a.endpoint(rx.url, ["messages", "history"]);
  const since = new Date(app.deps.clock.now()).toISOString();
  for (let i = 0; i < 120; i++) {
    const change = i < 3 ? messageChange(a.numbers[0]!, `sync ${i}`, "history") : messageChange(a.numbers[0]!, `m${i}`);
    expect((await app.post(eventBody([{ id: a.wabaId, changes: [change] }]))).status).toBe(200);
  }
  await app.tick();
  const parked = async () =>
    ((await a.api("GET", `/api/deliveries?endpoint_id=${ep.id}&status=parked&limit=200`)).body as { data: unknown[] })
      .data.length;
  expect(await parked()).toBe(120);

  // The receiver works again: enable the endpoint (the 410 disabled it) and recover.
  answer = 200;
  expect((await a.api("POST", `/api/endpoints/${ep.id}/enable`)).status).toBe(200);
  expect((await a.api("GET", `/api/endpoints/${ep.id}/recover`)).body).toBeNull();
  const started = await a.api("POST", `/api/endpoints/${ep.id}/recover`, { since });
  expect(started.status).toBe(202);
  const job = started.body as RecoveryJson;
  // Asked again while it runs: the same job.
  const again = await a.api("POST", `/api/endpoints/${ep.id}/recover`, { since });
  expect((again.body as RecoveryJson).id === job.id || (again.body as RecoveryJson).skipped_replayed > 0).toBe(true);

  const progress = async () => (await a.api("GET", `/api/endpoints/${ep.id}/recover`)).body as RecoveryJson;
  expect(await eventually(async () => (await progress()).status, "done", 10_000)).toBe("done");
  const done = await progress();
  expect(done).toMatchObject({ id: job.id, found: 120, replayed: 117, skipped_expired: 3, skipped_replayed: 0 });
  await app.tick();
  const replays = (
    (await a.api("GET", `/api/deliveries?endpoint_id=${ep.id}&status=succeeded&limit=200`)).body as {
      data: { replay_of: string | null }[];
    }
  ).data;
  expect(replays).toHaveLength(117);
  expect(new Set(replays.map((d) => d.replay_of)).size).toBe(117);
  expect(replays.every((d) => d.replay_of !== null)).toBe(true);

  // Once done, asking again starts a new recover that finds everything replayed already.
  const second = (await a.api("POST", `/api/endpoints/${ep.id}/recover`, { since })).body as RecoveryJson;
  expect(second.id).not.toBe(job.id);
  expect(await eventually(async () => (await progress()).status, "done", 10_000)).toBe("done");
  expect(await progress()).toMatchObject({
    id: second.id,
    found: 120,
    replayed: 0,
    skipped_expired: 3,
    skipped_replayed: 117,
  });

  // The dashboard's endpoint page shows it.
  const html = await a.page(`/dashboard/endpoints/${ep.id}`);
  expect(html).toContain("117 already replayed");

  // Bad input and another account's endpoint.
  expect((await a.api("POST", `/api/endpoints/${ep.id}/recover`, { since: "last week" })).status).toBe(400);
  const other = await app.account();
  expect((await other.api("POST", `/api/endpoints/${ep.id}/recover`, { since })).status).toBe(404);
  expect((await other.api("GET", `/api/endpoints/${ep.id}/recover`)).status).toBe(404);
});
