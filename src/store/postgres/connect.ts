import { SQL } from "bun";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
import * as schema from "./schema.ts";

export type PgDb = BunSQLDatabase<typeof schema> & { $client: SQL };

/** Connections per instance by default: every claim, completion batch and request holds one briefly. */
export const POOL_SIZE = 10;

/**
 * Bun's built-in client (chosen by measurement: bench/RESULTS.md, "PostgreSQL driver"), with
 * drizzle over it for the simple statements; the queue's hot statements are plain SQL on the
 * same pool. A refused or dropped connection fails the query at once and the pool connects again
 * on the next one, so nothing here retries: the caller's request is answered 503.
 */
export function connect(url: string, options: { max?: number } = {}): PgDb {
  const client = new SQL({
    url,
    max: options.max ?? POOL_SIZE,
    // A server that does not answer the connection at all (a partition rather than a refusal).
    connectionTimeout: 5,
    // Idle connections are closed after a while, so a quiet instance holds few of the server's slots.
    idleTimeout: 60,
    // Every statement is planned for the tables as they are when it runs: unnamed statements are
    // planned anew each time. Named (prepared) ones get a generic plan after five runs, and one made
    // while the queue was small read deliveries by id with a sequential scan, 15-40 ms a completion
    // or a claim once 30,000 were waiting (bench/RESULTS.md). Forcing custom plans on the whole
    // session instead (plan_cache_mode) also re-planned every foreign-key check PostgreSQL runs
    // inside an insert, about 85 µs of its CPU per delivery; these keep their generic plans. The
    // claim's function plans its own statements each time (its migration sets that on it).
    prepare: false,
    connection: { application_name: "switchboard" },
  });
  return drizzle({ client, schema }) as PgDb;
}

/**
 * `$1::bigint, $2::text[], …` for the types given (space-separated, in as many lists as are
 * clearer): the arguments of a call to one of the queue's functions, cast so that each value
 * binds to its parameter whatever type the client would give it.
 */
export function typedParams(...types: string[]): string {
  return types
    .flatMap((list) => list.split(" "))
    .map((type, i) => `$${i + 1}::${type}`)
    .join(", ");
}

/** A transaction's two faces: plain SQL for the queue's statements, drizzle for the rest. */
export interface Tx {
  raw: SQL;
  orm: BunSQLDatabase;
}

/** Runs `work` in one transaction (committed when it resolves, rolled back when it throws). */
export function transaction<T>(db: PgDb, work: (tx: Tx) => Promise<T>): Promise<T> {
  return db.$client.begin((raw) =>
    work({ raw: raw as unknown as SQL, orm: drizzle({ client: raw as unknown as SQL }) }),
  ) as Promise<T>;
}

/** SQLSTATEs of a transaction that lost a race with another (deadlock, serialization) and may simply run again. */
const RETRYABLE = new Set(["40P01", "40001"]);

/** Runs `work` (a transaction) again when it lost a race, up to 5 times; anything else is thrown. */
export async function retried<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 5 || !RETRYABLE.has((error as { errno?: string }).errno ?? "")) throw error;
    }
  }
}
