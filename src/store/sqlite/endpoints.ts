import type { Database } from "bun:sqlite";
import { asc, eq, sql } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import type { AuditEntry } from "../audit.ts";
import type {
  DeliveryEndpoint,
  Endpoint,
  EndpointPatch,
  EndpointStore,
  EndpointTarget,
  SignatureScheme,
} from "../endpoints.ts";
import { EndpointOpener, sealEndpoint, sealEndpointPatch } from "../sealed-rows.ts";
import type { AuditWriter } from "./audit.ts";
import type { Removed, SqliteDeletions } from "./deletions.ts";
import { DELETE_BATCH } from "./deletions.ts";
import { statement, type Db } from "./open.ts";
import { endpoints } from "./schema.ts";

function prepare(db: Db, sqlite: Database) {
  return {
    byId: db
      .select()
      .from(endpoints)
      .where(eq(endpoints.id, sql.placeholder("id")))
      .prepare(),
    targets: statement<
      { id: string; fields: string; phone_number_id: string | null; signature: SignatureScheme },
      { account: string }
    >(
      sqlite,
      "SELECT id, fields, phone_number_id, signature FROM endpoints WHERE account_id = $account ORDER BY created_at, id",
    ),
    stopSending: statement<unknown, { id: string }>(sqlite, "UPDATE endpoints SET enabled = 0 WHERE id = $id"),
    deliveries: statement<{ event_id: string }, { endpoint: string }>(
      sqlite,
      `DELETE FROM deliveries WHERE rowid IN (
      SELECT rowid FROM deliveries WHERE endpoint_id = $endpoint LIMIT ${DELETE_BATCH}) RETURNING event_id`,
    ),
    events: statement<{ event_id: string }, { endpoint: string }>(
      sqlite,
      "SELECT DISTINCT event_id FROM deliveries WHERE endpoint_id = $endpoint",
    ),
  };
}

/**
 * Endpoints go through drizzle's query builder. What ingress matches (targets) and what an attempt
 * reads (forDelivery) are kept in memory: this process is the only writer of endpoints (see
 * server-lock.ts), and the queue tells it of the endpoints it disables (forget).
 */
export class SqliteEndpoints implements EndpointStore {
  private readonly stmt: ReturnType<typeof prepare>;
  private readonly opener: EndpointOpener;
  private readonly targetsByAccount = new Map<string, EndpointTarget[]>();
  private readonly deliveryEndpoints = new Map<string, DeliveryEndpoint>();
  private readonly deleteBatch: (params: { endpoint: string }) => Removed;

  constructor(
    private readonly db: Db,
    private readonly sqlite: Database,
    private readonly sealer: Sealer,
    private readonly deletions: SqliteDeletions,
    private readonly audit: AuditWriter,
  ) {
    this.stmt = prepare(db, sqlite);
    this.opener = new EndpointOpener(sealer);
    this.deleteBatch = deletions.batch(this.stmt.deliveries);
  }

  /** Drops what is kept in memory of an endpoint that changed. */
  forget(id: string): void {
    this.targetsByAccount.clear();
    this.deliveryEndpoints.delete(id);
  }

  async create(endpoint: Endpoint, audit?: AuditEntry) {
    this.targetsByAccount.delete(endpoint.accountId);
    this.audit.audited(audit, () => this.db.insert(endpoints).values(sealEndpoint(endpoint, this.sealer)).run());
    return { ...endpoint };
  }

  async get(id: string) {
    const row = this.stmt.byId.get({ id });
    return row ? this.opener.endpoint(row) : undefined;
  }

  async ofAccount(accountId: string) {
    return this.db
      .select()
      .from(endpoints)
      .where(eq(endpoints.accountId, accountId))
      .orderBy(asc(endpoints.createdAt), asc(endpoints.id))
      .all()
      .map((row) => this.opener.endpoint(row));
  }

  targets(accountId: string): EndpointTarget[] {
    let list = this.targetsByAccount.get(accountId);
    if (list === undefined) {
      list = this.stmt.targets.all({ account: accountId }).map((row) => ({
        id: row.id,
        fields: JSON.parse(row.fields) as string[],
        phoneNumberId: row.phone_number_id,
        signature: row.signature,
      }));
      this.targetsByAccount.set(accountId, list);
    }
    return list;
  }

  /** forDelivery, synchronously: the queue's claim reads it inside its transaction. */
  forDeliveryNow(id: string): DeliveryEndpoint | undefined {
    let endpoint = this.deliveryEndpoints.get(id);
    if (endpoint === undefined) {
      const row = this.stmt.byId.get({ id });
      if (!row) return undefined;
      endpoint = this.opener.deliveryEndpoint(row);
      this.deliveryEndpoints.set(id, endpoint);
    }
    return endpoint;
  }

  async forDelivery(id: string) {
    return this.forDeliveryNow(id);
  }

  async update(id: string, patch: EndpointPatch, audit?: AuditEntry) {
    const changed = this.audit.audited(
      audit,
      () =>
        this.db
          .update(endpoints)
          .set(sealEndpointPatch(patch, this.sealer))
          .where(eq(endpoints.id, id))
          .returning()
          .get(),
      (row) => row !== undefined,
    );
    this.forget(id);
    return changed ? this.opener.endpoint(changed) : undefined;
  }

  async delete(id: string, audit?: AuditEntry) {
    // Nothing more is sent to it meanwhile: an attempt starting now finds it disabled and parks.
    // This first write is the change that counts: the entry goes with it.
    const stopped = this.audit.audited(
      audit,
      () => this.stmt.stopSending.run({ id }).changes,
      (changes) => changes > 0,
    );
    this.forget(id);
    if (stopped === 0) return false;
    // Its deliveries first, in batches as the purge takes them: all in one transaction, a busy
    // endpoint's would hold the thread for seconds (8.5 us each).
    await this.deletions.inBatches(DELETE_BATCH, () => this.deleteBatch({ endpoint: id }));
    // Those stored since go with it (foreign key); so do the events no other delivery needs.
    const deleted = this.sqlite.transaction(() => {
      const events = this.stmt.events.all({ endpoint: id }).map((row) => row.event_id);
      const gone =
        this.db.delete(endpoints).where(eq(endpoints.id, id)).returning({ id: endpoints.id }).all().length > 0;
      this.deletions.dropOrphanEvents(events);
      return gone;
    })();
    // An attempt that started meanwhile read it again.
    this.forget(id);
    return deleted;
  }
}
