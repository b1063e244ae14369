import { afterEach, describe, expect, test } from "bun:test";
import { parseEvent, wrapEntries } from "../../src/webhooks/event.ts";
import { scanBody } from "../../src/webhooks/scanner.ts";
import * as fz from "./fuzz-json.ts";
import { relayApp, type RelayApp } from "./support.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

describe("byte-range scanner (unit)", () => {
  test("finds object and entries in a plain body", () => {
    const text = '{"object":"x","entry":[{"id":"1","changes":[]},{"id":"2","changes":[]}]}';
    const ranges = scanBody(enc.encode(text));
    expect(text.slice(...ranges.object!)).toBe('"x"');
    expect(ranges.entries.map((r) => text.slice(...r))).toEqual(['{"id":"1","changes":[]}', '{"id":"2","changes":[]}']);
  });

  test("a repeated member name: the last wins, as in JSON.parse", () => {
    const text = '{"entry":[{"id":"old","changes":[]}],"object":"x","entry":[{"id":"new","changes":[]}]}';
    const parsed = parseEvent(enc.encode(text));
    expect(parsed.ok && parsed.event.entries.map((e) => e.wabaId)).toEqual(["new"]);
  });

  test("fuzz: every split body is the wrapper around the original entry bytes, in order", () => {
    for (let seed = 1; seed <= 400; seed++) {
      const r = fz.rng(seed);
      const wabas = ["w1", "w2", "w3"];
      const raw: { waba: string; text: string }[] = Array.from({ length: 1 + r.int(6) }, () => {
        const waba = r.pick(wabas);
        return {
          waba,
          text: fz.entry(
            r,
            waba,
            Array.from({ length: 1 + r.int(2) }, () =>
              fz.change(r, r.pick(["messages", "history", "security"]), `pn${r.int(3)}`),
            ),
          ),
        };
      });
      const { text, objectRaw } = fz.body(
        r,
        raw.map((e) => e.text),
      );
      const bytes = enc.encode(text);
      const parsed = parseEvent(bytes);
      if (!parsed.ok) throw new Error(`seed ${seed}: ${parsed.reason}\n${text}`);
      expect(parsed.event.entries.map((e) => e.wabaId)).toEqual(raw.map((e) => e.waba));
      for (const waba of wabas) {
        const mine = parsed.event.entries.filter((e) => e.wabaId === waba);
        if (mine.length === 0) continue;
        const expected = `{"object":${objectRaw},"entry":[${raw
          .filter((e) => e.waba === waba)
          .map((e) => e.text)
          .join(",")}]}`;
        const out = dec.decode(wrapEntries(parsed.event, mine));
        if (out !== expected) throw new Error(`seed ${seed}: split body differs\n${out}\n${expected}`);
        // And it is still the same JSON as the original entries.
        expect(JSON.parse(out).entry).toEqual(
          (JSON.parse(text).entry as { id: string }[]).filter((e) => e.id === waba),
        );
      }
    }
  });

  test("shapes other than docs/webhooks.md#the-payload are refused with a reason", () => {
    for (const text of [
      "[]",
      "{}",
      '{"object":1,"entry":[]}',
      '{"object":"x","entry":{}}',
      '{"object":"x","entry":[{"id":1,"changes":[]}]}',
      '{"object":"x","entry":[{"id":"1","changes":[{"field":"messages"}]}]}',
      "{not json",
      '{"object":"x","entry":[]}garbage',
    ]) {
      expect(parseEvent(enc.encode(text)).ok).toBe(false);
    }
    expect(parseEvent(new Uint8Array([0x7b, 0xff, 0x7d])).ok).toBe(false);
  });
});

let app: RelayApp;
afterEach(() => app?.close());

describe("fan-out over HTTP (docs/webhooks.md#batches)", () => {
  test("fuzzed batches across three accounts: each gets exactly its own entries' bytes; a single-account body arrives byte for byte with upstream's signature", async () => {
    app = await relayApp();
    const accounts = await Promise.all([app.account(), app.account(), app.account()]);
    const rx = accounts.map(() => app.receiver());
    await Promise.all(accounts.map((a, i) => a.endpoint(rx[i]!.url, ["messages", "history", "security"])));
    for (let seed = 1; seed <= 25; seed++) {
      const r = fz.rng(1000 + seed);
      const picks = Array.from({ length: 1 + r.int(5) }, () => r.int(3));
      const raw = picks.map((i) => ({
        i,
        text: fz.entry(r, accounts[i]!.wabaId, [
          fz.change(r, r.pick(["messages", "security"]), accounts[i]!.numbers[0]!),
        ]),
      }));
      const { text, objectRaw } = fz.body(
        r,
        raw.map((e) => e.text),
      );
      const before = rx.map((x) => x.received.length);
      const response = await app.post(text);
      expect(response.status).toBe(200);
      await app.tick();
      const involved = [...new Set(picks)];
      for (let i = 0; i < 3; i++) {
        const got = rx[i]!.received.slice(before[i]);
        if (!involved.includes(i)) {
          expect(got).toHaveLength(0);
          continue;
        }
        expect(got).toHaveLength(1);
        if (involved.length === 1) {
          expect(got[0]!.body).toBe(text);
          expect(got[0]!.headers["x-upstream-signature-256"]).toStartWith("sha256=");
        } else {
          expect(got[0]!.body).toBe(
            `{"object":${objectRaw},"entry":[${raw
              .filter((e) => e.i === i)
              .map((e) => e.text)
              .join(",")}]}`,
          );
          expect(got[0]!.headers["x-upstream-signature-256"]).toBeUndefined();
        }
      }
    }
  });

  test("fields and number filters: one delivery per event when any change matches; unmatched endpoints get nothing", async () => {
    app = await relayApp();
    const a = await app.account({ numbers: 2 });
    const [all, onlyFirst, onlySecond, security] = [app.receiver(), app.receiver(), app.receiver(), app.receiver()];
    await a.endpoint(all.url, ["messages"]);
    await a.endpoint(onlyFirst.url, ["messages"], a.numbers[0]!);
    await a.endpoint(onlySecond.url, ["messages"], a.numbers[1]!);
    await a.endpoint(security.url, ["security"]);
    const r = fz.rng(7);
    const text = fz.body(r, [
      fz.entry(r, a.wabaId, [fz.change(r, "messages", a.numbers[0]!), fz.change(r, "messages", a.numbers[0]!)]),
    ]).text;
    expect((await app.post(text)).status).toBe(200);
    await app.tick();
    expect([all, onlyFirst, onlySecond, security].map((x) => x.received.length)).toEqual([1, 1, 0, 0]);
    expect(all.received[0]!.body).toBe(text);
  });

  test("entries of unknown WABAs are dropped and logged; the rest is re-wrapped without upstream's signature", async () => {
    app = await relayApp();
    const a = await app.account();
    const rx = app.receiver();
    await a.endpoint(rx.url);
    const r = fz.rng(9);
    const mine = fz.entry(r, a.wabaId, [fz.change(r, "messages", a.numbers[0]!)]);
    const { text, objectRaw } = fz.body(r, [fz.entry(r, "unknown-waba", [fz.change(r, "messages", "x")]), mine]);
    expect((await app.post(text)).status).toBe(200);
    await app.tick();
    expect(rx.received.map((x) => x.body)).toEqual([`{"object":${objectRaw},"entry":[${mine}]}`]);
    expect(rx.received[0]!.headers["x-upstream-signature-256"]).toBeUndefined();
    expect(
      app.deps.logger.lines.some(
        (l) =>
          l.msg === "webhook entries dropped" &&
          l.unknown_waba === 1 &&
          (l.first_waba_ids as string[])[0] === "unknown-waba",
      ),
    ).toBe(true);
  });
});
