#!/usr/bin/env bun
/**
 * What the audit log costs the changes it records (issue 29): an endpoint change, a key revocation
 * and a sign-in's new session, each made ITERATIONS times with its entry and as many without,
 * alternately in one run, on SQLite (a file, as the server opens it) and on PostgreSQL (a database
 * of its own on BENCH_POSTGRES_URL's server). "With" builds the entry as the service does
 * (changesOf, auditEntry) and hands it to the same store call, which writes it in the change's
 * transaction; "without" is the store call alone. A whole sign-in also checks an argon2id hash
 * (tens of milliseconds), which is left out so that the write's own cost shows.
 *
 *   bun bench/audit/run.ts   (ITERATIONS=2000; BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test, "" for SQLite only)
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { changesOf } from "../../src/audit/changes.ts";
import { auditEntry, byUser } from "../../src/audit/entry.ts";
import { createSealer } from "../../src/crypto/sealer.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import { cryptoRandom, randomId } from "../../src/runtime/random.ts";
import type { Endpoint } from "../../src/store/endpoints.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/store.ts";
import { endpointRow } from "../../test/support/queue-rows.ts";

const ITERATIONS = Number(process.env.ITERATIONS ?? 2000);
const POSTGRES = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const deps = { clock: systemClock, random: cryptoRandom };
const by = byUser({ id: "usr_bench", email: "bench@example.com" }, "127.0.0.1");
const sealer = createSealer(new Uint8Array(32).fill(7), cryptoRandom);

type Op = (audited: boolean) => Promise<unknown>;

/** The account, user and endpoint the changes are made to. */
async function fixture(store: Store) {
  const now = Date.now();
  await store.directory.createAccount({
    id: "acc_bench",
    name: "Bench",
    email: "bench@example.com",
    billingStatus: "active",
    retention: "24h",
    maxNumbers: null,
    createdAt: now,
  });
  await store.users.create({
    id: "usr_bench",
    accountId: "acc_bench",
    email: "bench@example.com",
    passwordHash: "x",
    createdAt: now,
  });
  let endpoint: Endpoint = endpointRow("ep_bench", "acc_bench", now);
  await store.endpoints.create(endpoint);

  let n = 0;
  const endpointChange: Op = async (audited) => {
    const patch = { url: `https://receiver.example/${++n}`, updatedAt: Date.now() };
    const entry =
      audited &&
      auditEntry(
        deps,
        by,
        "endpoint.update",
        { kind: "endpoint", id: endpoint.id },
        "acc_bench",
        changesOf(endpoint, patch),
      );
    endpoint = (await store.endpoints.update(endpoint.id, patch, entry || undefined)) ?? endpoint;
  };
  // Each revocation needs a key not yet revoked: made beforehand, outside the timing.
  const keys: string[] = [];
  const makeKeys = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const id = randomId(cryptoRandom, "key");
      const hash = createHash("sha256").update(id).digest("hex");
      await store.directory.createApiKey({
        id,
        accountId: "acc_bench",
        mode: "live",
        name: null,
        prefix: "px_live_bench",
        keyHash: hash,
        createdAt: Date.now(),
        revokedAt: null,
      });
      keys.push(id);
    }
  };
  const keyRevocation: Op = async (audited) => {
    const id = keys.pop();
    const key = id === undefined ? undefined : store.directory.apiKey(id);
    if (!key) throw new Error("no key left to revoke");
    const now = Date.now();
    const entry =
      audited &&
      auditEntry(
        deps,
        by,
        "api_key.revoke",
        { kind: "api_key", id: key.id },
        "acc_bench",
        changesOf(key, { revokedAt: now }),
      );
    await store.directory.revokeApiKey(key.id, now, entry || undefined);
  };
  const signIn: Op = async (audited) => {
    const now = Date.now();
    const session = {
      tokenHash: createHash("sha256")
        .update(randomId(cryptoRandom, "t", 32))
        .digest("hex"),
      userId: "usr_bench",
      accountId: "acc_bench",
      createdAt: now,
      expiresAt: now + 3_600_000,
    };
    const entry = audited && auditEntry(deps, by, "session.create", { kind: "user", id: "usr_bench" }, "acc_bench");
    await store.sessions.create(session, entry || undefined);
  };
  return { endpointChange, keyRevocation, signIn, makeKeys };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
const us = (ms: number) => `${(ms * 1000).toFixed(0).padStart(6)} µs`;

/** Runs `op` alternately with and without its entry; prints median and p99 of each and the difference. */
async function measure(name: string, op: Op) {
  const times = { with: [] as number[], without: [] as number[] };
  for (let i = 0; i < 100; i++) await op(i % 2 === 0);
  for (let i = 0; i < ITERATIONS * 2; i++) {
    const audited = i % 2 === 0;
    const t0 = performance.now();
    await op(audited);
    (audited ? times.with : times.without).push(performance.now() - t0);
  }
  for (const list of Object.values(times)) list.sort((a, b) => a - b);
  const [w, wo] = [times.with, times.without];
  console.log(
    `  ${name.padEnd(18)} without: p50 ${us(percentile(wo, 0.5))} p99 ${us(percentile(wo, 0.99))} | with: p50 ${us(percentile(w, 0.5))} p99 ${us(percentile(w, 0.99))} | entry adds ${us(percentile(w, 0.5) - percentile(wo, 0.5))} at p50`,
  );
}

async function run(label: string, store: Store) {
  const ops = await fixture(store);
  await ops.makeKeys(ITERATIONS * 2 + 100);
  console.log(`${label} (${ITERATIONS} of each, alternating):`);
  await measure("endpoint change", ops.endpointChange);
  await measure("key revocation", ops.keyRevocation);
  await measure("sign-in (session)", ops.signIn);
  console.log(`  entries written: ${(await store.audit.list({}, ITERATIONS * 10)).length}`);
}

const dir = mkdtempSync(join(tmpdir(), "switchboard-bench-audit-"));
try {
  const sqlite = openSqliteStore(join(dir, "bench.db"), sealer);
  await run("SQLite", sqlite);
  await sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

if (POSTGRES) {
  const server = new SQL({ url: POSTGRES, max: 1 });
  const name = `sb_bench_audit_${process.pid}`;
  await server.unsafe(`CREATE DATABASE ${name}`);
  try {
    const url = new URL(POSTGRES);
    url.pathname = `/${name}`;
    const store = await openPostgresStore(url.toString(), sealer);
    await run(`PostgreSQL (${new URL(POSTGRES).host})`, store);
    await store.close();
  } finally {
    await server.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.close();
  }
}
