import { postgresName } from "../../config/readers.ts";
import type { Sealer } from "../../crypto/sealer.ts";
import { cryptoRandom, randomId, type Random } from "../../runtime/random.ts";
import type { Store } from "../store.ts";
import { PgAudit } from "./audit.ts";
import { PgBuckets } from "./buckets.ts";
import { ChangeFeed } from "./changes.ts";
import { connect, type PgDb } from "./connect.ts";
import { PgDeletions } from "./deletions.ts";
import { PgDirectory } from "./directory.ts";
import { PgEndpoints } from "./endpoints.ts";
import { PgHistory } from "./history.ts";
import { PgInstances } from "./instances.ts";
import { hearsItself } from "./listen-probe.ts";
import { applyMigrations } from "./migrate.ts";
import { atOnce, patiently, type StartPatience } from "./patience.ts";
import { PgNotifications } from "./notifications.ts";
import { PgOnboardings } from "./onboardings.ts";
import { PgOperators } from "./operators.ts";
import { PgSignInCounts } from "./sign-in-counts.ts";
import { PgOverview } from "./overview.ts";
import { PgQueue } from "./queue.ts";
import { PgRecoveries } from "./recoveries.ts";
import { PgRequestLog } from "./requests.ts";
import { PgRetention } from "./retention.ts";
import { unavailableAsStoreError } from "./unavailable.ts";
import { PgSessions, PgUsers } from "./users.ts";

export interface PgStore extends Store {
  /** For capabilities whose PostgreSQL implementation lives beside their own code. */
  readonly db: PgDb;
}

export interface PgStoreOptions {
  /** Connections in the pool (POOL_SIZE by default). */
  max?: number;
  /**
   * A direct URL to the same database for what needs a session of its own: the LISTEN connection
   * and the migrations' lock (when `url` is a PgBouncer in transaction mode); `url` by default.
   */
  directUrl?: string | null;
  /** A starting server's: connections refused at start are tried again (see patiently); none: fail at once. */
  patience?: StartPatience;
  /** Told of failures in the background (a change that could not be read again). */
  onError?: (error: unknown) => void;
  /** The instance this process is (InstanceStore.self); one of its own by default (the CLI's, a test's). */
  instance?: string;
  /** Random bytes, for this process's incarnation (see PgInstances). */
  random?: Random;
}

/** Stores opened by this process so far: a store given no instance id gets one no other has. */
let opened = 0;

/** How long healthy() waits for the server's answer: /healthz must answer promptly either way. */
const HEALTH_TIMEOUT_MS = 1_000;

/**
 * Opens the scale-out store on the database at `url`: migrates it (once, whatever the number of
 * instances starting), loads the directory and endpoints, and listens for other instances'
 * changes and new work. Rejects when the server cannot be reached: the service does not start.
 */
export function openPostgresStore(url: string, sealer: Sealer, options: PgStoreOptions = {}): Promise<PgStore> {
  const self = options.instance ?? `process-${process.pid}-${++opened}`;
  const open = () => openOnce(url, sealer, options, self);
  return options.patience ? patiently(open, options.patience) : atOnce(open, postgresName(url));
}

async function openOnce(url: string, sealer: Sealer, options: PgStoreOptions, self: string): Promise<PgStore> {
  const db = connect(url, { max: options.max });
  const direct = options.directUrl ? connect(options.directUrl, { max: 1 }).$client : null;
  const listener = direct ?? db.$client;
  const random = options.random ?? cryptoRandom;
  try {
    const probe = await hearsItself(db.$client, listener, randomId(random, "probe", 16), direct !== null);
    await applyMigrations(listener);
    const feed = new ChangeFeed(db, listener, options.onError ?? (() => {}));
    const directory = new PgDirectory(db, sealer, feed);
    const deletions = new PgDeletions(db.$client);
    const endpoints = new PgEndpoints(db, sealer, feed, deletions);
    const queue = new PgQueue(db, listener, endpoints, feed, self);
    const instances = new PgInstances(db.$client, self, randomId(random, "inc", 16));
    const requests = new PgRequestLog(db, url);
    await feed.start();
    await queue.start();
    await probe.unlisten();
    let closed = false;
    return {
      db,
      directory: unavailableAsStoreError(directory),
      users: unavailableAsStoreError(new PgUsers(db)),
      sessions: unavailableAsStoreError(new PgSessions(db)),
      operators: unavailableAsStoreError(new PgOperators(db)),
      signIns: unavailableAsStoreError(new PgSignInCounts(db)),
      overview: unavailableAsStoreError(new PgOverview(db.$client)),
      notifications: unavailableAsStoreError(new PgNotifications(db)),
      requests: unavailableAsStoreError(requests),
      recoveries: unavailableAsStoreError(new PgRecoveries(db)),
      onboardings: unavailableAsStoreError(new PgOnboardings(db, sealer)),
      buckets: unavailableAsStoreError(new PgBuckets(db)),
      endpoints: unavailableAsStoreError(endpoints),
      queue: unavailableAsStoreError(queue),
      instances: unavailableAsStoreError(instances),
      history: unavailableAsStoreError(new PgHistory(db, endpoints)),
      retention: unavailableAsStoreError(new PgRetention(db, deletions)),
      audit: unavailableAsStoreError(new PgAudit(db)),
      async healthy() {
        const answer = db.$client.unsafe("SELECT 1 AS ok").then(
          (rows) => rows.length === 1,
          () => false,
        );
        const late = new Promise<false>((resolve) => setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS).unref());
        return Promise.race([answer, late]);
      },
      async close() {
        if (closed) return;
        closed = true;
        await queue.close();
        await feed.close();
        await requests.close();
        await db.$client.close();
        await direct?.close();
      },
    };
  } catch (error) {
    await db.$client.close();
    await direct?.close();
    throw error;
  }
}
