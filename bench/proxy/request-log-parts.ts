#!/usr/bin/env bun
/**
 * The request log's parts, each beside its floor, in CPU time per record on one thread (no load
 * test's noise): the hand-over (a batch as JSON text, stringified on the serving thread and parsed
 * on the writer's), and the writer's inserts into a fresh log file, against bare inserts of the
 * same rows with fewer indexes; then one message id looked up. Records look like row (d)'s of
 * bench/proxy/run.ts: message sends over NUMBERS numbers of one account, each with a message id.
 *
 *   bun bench/proxy/request-log-parts.ts      (RECORDS=200000 BATCH=500 NUMBERS=1000 by default;
 *                                               BATCH=2000: a lagging writer's batches)
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cryptoRandom, randomId, timeOrderedIdSource } from "../../src/runtime/random.ts";
import type { RequestRecord } from "../../src/store/requests.ts";
import { openRequestLogFile } from "../../src/store/sqlite/request-log-file.ts";
import { recordValues, requestLogWrites, SLOT_RECORDS } from "../../src/store/sqlite/request-log-writes.ts";
import { SqliteRequestLog } from "../../src/store/sqlite/requests.ts";

const RECORDS = Number(process.env.RECORDS ?? 200_000);
const BATCH = Number(process.env.BATCH ?? 500);
const NUMBERS = Number(process.env.NUMBERS ?? 1000);

const nextId = timeOrderedIdSource(cryptoRandom, "req");
const start = Date.now();
const records: RequestRecord[] = [];
for (let i = 0; i < RECORDS; i++) {
  const at = start + Math.floor(i / 20); // 20,000 calls a second
  records.push({
    id: nextId(at),
    accountId: "acc_bench",
    at,
    apiKeyId: "key_bench",
    method: "POST",
    route: "POST /{phone_number_id}/messages",
    phoneNumberId: `1000${i % NUMBERS}`,
    wabaId: "2000",
    status: 200,
    errorCode: null,
    upstreamStatus: 200,
    upstreamErrorCode: null,
    upstreamErrorSubcode: null,
    upstreamMs: 0.8,
    requestBytes: 180,
    responseBytes: 150,
    messageId: `wamid.${randomId(cryptoRandom, "HBgL", 40)}`,
  });
}
const batches: RequestRecord[][] = [];
for (let i = 0; i < records.length; i += BATCH) batches.push(records.slice(i, i + BATCH));

/** CPU µs per record of `run` over every batch (this thread's user + system time). */
function perRecord(run: (batch: RequestRecord[]) => void): number {
  const before = process.cpuUsage();
  for (const batch of batches) run(batch);
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / RECORDS;
}

const work = mkdtempSync(join(tmpdir(), "switchboard-log-parts-"));
const COLUMNS = `id TEXT NOT NULL, account_id TEXT NOT NULL, at INTEGER NOT NULL, api_key_id TEXT NOT NULL,
  method TEXT NOT NULL, route TEXT, phone_number_id TEXT, waba_id TEXT, status INTEGER NOT NULL, error_code INTEGER,
  upstream_status INTEGER, upstream_error_code INTEGER, upstream_error_subcode INTEGER, upstream_ms REAL,
  request_bytes INTEGER, response_bytes INTEGER, message_id TEXT, slot INTEGER`;
/** A bare table in a file of its own (WAL, synchronous NORMAL, as the log's), one prepared insert a row. */
function bareInserts(name: string, ddl: string): number {
  const db = new Database(join(work, `${name}.db`), { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  db.exec(ddl);
  const insert = db.prepare(`INSERT INTO t VALUES (${Array(18).fill("?").join(", ")})`);
  let n = 0;
  const write = db.transaction((batch: RequestRecord[]) => {
    for (const r of batch) insert.run(...recordValues(r), Math.floor(n++ / SLOT_RECORDS));
  });
  const us = perRecord(write);
  db.close();
  return us;
}

try {
  const handOver = perRecord((batch) => {
    JSON.parse(JSON.stringify(batch.map(recordValues)));
  });
  const table = `CREATE TABLE t (${COLUMNS});`;
  const ends = `${table} CREATE UNIQUE INDEX t_id ON t (id); CREATE INDEX t_account ON t (account_id, at);`;
  const floors: [string, string][] = [
    ["floor: rows in rowid order, no index", table],
    ["+ request id and account+time indexes (filled at their ends)", ends],
    ["+ an index of the whole message id", `${ends} CREATE INDEX t_m ON t (message_id) WHERE message_id IS NOT NULL;`],
    [
      "+ an index of its last 16 characters",
      `${ends} CREATE INDEX t_m ON t (substr(message_id, -16)) WHERE message_id IS NOT NULL;`,
    ],
    [
      "+ its last 16 characters after a slot of 8,192 (version 3's index)",
      `${ends} CREATE INDEX t_m ON t (slot, substr(message_id, -16)) WHERE message_id IS NOT NULL;`,
    ],
    [
      "version 1: WITHOUT ROWID by id, account+time, whole message id",
      `CREATE TABLE t (${COLUMNS}, PRIMARY KEY (id)) WITHOUT ROWID; CREATE INDEX t_account ON t (account_id, at); CREATE INDEX t_m ON t (message_id) WHERE message_id IS NOT NULL;`,
    ],
  ];
  const measured = floors.map(([what, ddl], i) => [what, bareInserts(`floor${i}`, ddl)] as const);
  const log = openRequestLogFile(join(work, "log.db"));
  const writes = requestLogWrites(log);
  const logged = perRecord((batch) => writes.write(batch.map(recordValues)));
  const store = new SqliteRequestLog(log, { path: join(work, "log.db"), mainPath: null }, "");
  const wanted = records[Math.floor(RECORDS / 2)]!;
  // The first lookup prepares its statements: the second is the one timed.
  let lookupMs = 0;
  for (let i = 0; i < 2; i++) {
    const lookupStarted = performance.now();
    const found = await store.byMessageId(wanted.accountId, wanted.messageId!);
    lookupMs = performance.now() - lookupStarted;
    if (found.length !== 1) throw new Error(`the lookup found ${found.length} records`);
  }
  const pages = log
    .query<{ n: number }, []>("SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()")
    .get();
  log.close();

  const row = (what: string, us: number) => console.log(`  ${what.padEnd(66)} ${us.toFixed(2)}`);
  console.log(`${RECORDS} records in batches of ${BATCH}, ${NUMBERS} numbers; CPU µs per record on one thread`);
  row("hand-over: a batch as JSON text, stringified and parsed", handOver);
  for (const [what, us] of measured) row(what, us);
  row("the log's writes (its schema, INSERT OR IGNORE, usage counts)", logged);
  console.log(`  a message id looked up among them: ${lookupMs.toFixed(2)} ms`);
  console.log(`  the log's file: ${((pages?.n ?? 0) / RECORDS).toFixed(0)} bytes per record`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
