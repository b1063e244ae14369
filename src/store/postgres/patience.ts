import { DatabaseRefusedError } from "../errors.ts";
import { isUnavailable } from "./unavailable.ts";

/**
 * How a starting server waits for a PostgreSQL server that refuses it (docs/operations.md#connections):
 * one at its `max_connections`, a database or role at its CONNECTION LIMIT, a server not up yet.
 * Instances of a fleet often start together, or while a migration or a backup holds connections;
 * a slot usually frees within seconds.
 */
export interface StartPatience {
  /** The database, as messages name it (never with its password). */
  database: string;
  /** How long to keep trying, from the first attempt. */
  timeoutMs: number;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Told of each refusal before the wait that follows it. */
  onRefused(refusal: Refusal): void;
}

export interface Refusal {
  attempt: number;
  /** The server's (or the network's) words, never a stack. */
  reason: string;
  retryInMs: number;
}

const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 5_000;

/** The driver's own words for a refusal: its message, with the SQLSTATE or Bun's code. */
function reasonOf(error: unknown): string {
  let e = error as { message?: string; errno?: unknown; code?: unknown; cause?: unknown };
  // drizzle wraps the driver's error ("Failed query: …"); the driver's says why.
  while (e.cause && typeof e.cause === "object") e = e.cause as typeof e;
  const code = typeof e.errno === "string" ? e.errno : typeof e.code === "string" ? e.code : null;
  return code ? `${e.message} (${code})` : String(e.message);
}

/**
 * Runs `open` until it does not fail for want of a connection, waiting 0.25 s, then twice as long
 * each time up to 5 s; after `timeoutMs` it throws DatabaseRefusedError with one line naming
 * the database, the last reason and what to change. Any other failure is thrown at once.
 */
export async function patiently<T>(open: () => Promise<T>, patience: StartPatience): Promise<T> {
  const first = patience.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      const reason = reasonOf(error);
      const left = first + patience.timeoutMs - patience.now();
      if (left <= 0) {
        throw new DatabaseRefusedError(
          `PostgreSQL at ${patience.database} refused every connection for ${Math.round(patience.timeoutMs / 1000)} s (${attempt} attempts, the last: ${reason}); free connections (max_connections, DATABASE_POOL_SIZE of each instance, PgBouncer: docs/operations.md#connections) or raise DATABASE_START_TIMEOUT`,
        );
      }
      const retryInMs = Math.min(FIRST_WAIT_MS * 2 ** (attempt - 1), LONGEST_WAIT_MS, left);
      patience.onRefused({ attempt, reason, retryInMs });
      await patience.sleep(retryInMs);
    }
  }
}

/**
 * Runs `open` once (a command line does not wait): a failure for want of a connection becomes
 * DatabaseRefusedError with one line naming the database and the reason, never a stack.
 */
export async function atOnce<T>(open: () => Promise<T>, database: string): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    throw new DatabaseRefusedError(`PostgreSQL at ${database} could not be reached: ${reasonOf(error)}`);
  }
}
