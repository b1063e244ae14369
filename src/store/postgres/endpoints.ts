import { asc, eq, inArray } from "drizzle-orm";
import type { Sealer } from "../../crypto/sealer.ts";
import type { AuditEntry } from "../audit.ts";
import type { DeliveryEndpoint, Endpoint, EndpointPatch, EndpointStore, EndpointTarget } from "../endpoints.ts";
import { EndpointOpener, sealEndpoint, sealEndpointPatch } from "../sealed-rows.ts";
import { recordAudit } from "./audit.ts";
import type { ChangeFeed, ChangeKind, FedCache } from "./changes.ts";
import { transaction, type PgDb, type Tx } from "./connect.ts";
import { DELETE_BATCH, type PgDeletions } from "./deletions.ts";
import { endpoints } from "./schema.ts";

type Row = typeof endpoints.$inferSelect;

/**
 * Webhook endpoints, with what ingress matches (targets, read synchronously on every event) and
 * what an attempt reads (forDelivery) kept in memory and equal to the database on every instance
 * through the change feed, like the directory.
 */
export class PgEndpoints implements EndpointStore, FedCache {
  private readonly targetsById = new Map<string, EndpointTarget & { accountId: string; createdAt: number }>();
  private targetsByAccount = new Map<string, EndpointTarget[]>();
  private readonly deliveryEndpoints = new Map<string, DeliveryEndpoint>();
  /** Bumped whenever a change drops a cached endpoint: a read that began before it keeps nothing. */
  private generation = 0;
  private readonly opener: EndpointOpener;

  constructor(
    private readonly db: PgDb,
    private readonly sealer: Sealer,
    private readonly feed: ChangeFeed,
    private readonly deletions: PgDeletions,
  ) {
    this.opener = new EndpointOpener(sealer);
    feed.register(this, ["endpoint"]);
  }

  async loadAll(): Promise<void> {
    const rows = await this.db
      .select({
        id: endpoints.id,
        accountId: endpoints.accountId,
        fields: endpoints.fields,
        phoneNumberId: endpoints.phoneNumberId,
        signature: endpoints.signature,
        createdAt: endpoints.createdAt,
      })
      .from(endpoints);
    this.targetsById.clear();
    for (const row of rows) this.targetsById.set(row.id, row);
    this.targetsByAccount.clear();
    this.generation++;
    this.deliveryEndpoints.clear();
  }

  async reload(_kind: ChangeKind, ids: string[]): Promise<void> {
    const rows = await this.db.select().from(endpoints).where(inArray(endpoints.id, ids));
    for (const id of ids) this.forget(id);
    for (const row of rows) this.remember(row);
  }

  private remember(row: Row): void {
    this.targetsById.set(row.id, {
      id: row.id,
      accountId: row.accountId,
      fields: row.fields,
      phoneNumberId: row.phoneNumberId,
      signature: row.signature,
      createdAt: row.createdAt,
    });
    this.targetsByAccount.delete(row.accountId);
  }

  private forget(id: string): void {
    const target = this.targetsById.get(id);
    if (target) this.targetsByAccount.delete(target.accountId);
    this.targetsById.delete(id);
    this.deliveryEndpoints.delete(id);
    this.generation++;
  }

  /**
   * Commits `write` with its change record and audit entry (when it wrote a row), then updates
   * this instance's view in the feed's order.
   */
  private async write(
    id: string,
    write: (tx: Tx["orm"]) => Promise<Row | undefined>,
    audit?: AuditEntry,
  ): Promise<Row | undefined> {
    const row = await transaction(this.db, async (tx) => {
      const written = await write(tx.orm);
      if (written) {
        await this.feed.record(tx, "endpoint", [id]);
        await recordAudit(tx.raw, audit);
      }
      return written;
    });
    await this.feed.serially(() => {
      this.forget(id);
      if (row) this.remember(row);
    });
    return row;
  }

  async create(endpoint: Endpoint, audit?: AuditEntry): Promise<Endpoint> {
    await this.write(
      endpoint.id,
      async (tx) => (await tx.insert(endpoints).values(sealEndpoint(endpoint, this.sealer)).returning())[0],
      audit,
    );
    return { ...endpoint };
  }

  async get(id: string): Promise<Endpoint | undefined> {
    const [row] = await this.db.select().from(endpoints).where(eq(endpoints.id, id));
    return row ? this.opener.endpoint(row) : undefined;
  }

  async ofAccount(accountId: string): Promise<Endpoint[]> {
    const rows = await this.db
      .select()
      .from(endpoints)
      .where(eq(endpoints.accountId, accountId))
      .orderBy(asc(endpoints.createdAt), asc(endpoints.id));
    return rows.map((row) => this.opener.endpoint(row));
  }

  targets(accountId: string): EndpointTarget[] {
    let list = this.targetsByAccount.get(accountId);
    if (list === undefined) {
      // Oldest first, as the account's endpoints are listed.
      list = [...this.targetsById.values()]
        .filter((t) => t.accountId === accountId)
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
        .map((t) => ({ id: t.id, fields: t.fields, phoneNumberId: t.phoneNumberId, signature: t.signature }));
      this.targetsByAccount.set(accountId, list);
    }
    return list;
  }

  async forDelivery(id: string): Promise<DeliveryEndpoint | undefined> {
    return (await this.forDeliveries([id])).get(id);
  }

  /** Endpoints as attempts read them, from memory; those not there are read in one statement. */
  async forDeliveries(ids: string[]): Promise<Map<string, DeliveryEndpoint>> {
    const found = new Map<string, DeliveryEndpoint>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const cached = this.deliveryEndpoints.get(id);
      if (cached) found.set(id, cached);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const generation = this.generation;
    const rows = await this.db.select().from(endpoints).where(inArray(endpoints.id, missing));
    for (const row of rows) {
      const endpoint = this.opener.deliveryEndpoint(row);
      found.set(row.id, endpoint);
      if (this.generation === generation) this.deliveryEndpoints.set(row.id, endpoint);
    }
    return found;
  }

  async update(id: string, patch: EndpointPatch, audit?: AuditEntry): Promise<Endpoint | undefined> {
    const set = sealEndpointPatch(patch, this.sealer);
    const row = await this.write(
      id,
      async (tx) => (await tx.update(endpoints).set(set).where(eq(endpoints.id, id)).returning())[0],
      audit,
    );
    return row ? this.opener.endpoint(row) : undefined;
  }

  async delete(id: string, audit?: AuditEntry): Promise<boolean> {
    // Nothing more is sent to it meanwhile: an attempt starting now finds it disabled and parks.
    // This first write is the change that counts: the entry goes with it.
    const stopped = await this.write(
      id,
      async (tx) => (await tx.update(endpoints).set({ enabled: false }).where(eq(endpoints.id, id)).returning())[0],
      audit,
    );
    if (!stopped) return false;
    // Its deliveries in batches, so that no transaction grows with the endpoint's history.
    const batch = `SELECT id FROM deliveries WHERE endpoint_id = $1 LIMIT ${DELETE_BATCH}`;
    while ((await this.deletions.batch(batch, [id]))?.deliveries === DELETE_BATCH);
    // Those stored since go with it (cascade); so do the events no other delivery needs.
    const gone = await transaction(this.db, async (tx) => {
      const events = (await tx.raw.unsafe("SELECT DISTINCT event_id FROM deliveries WHERE endpoint_id = $1", [id])) as {
        event_id: string;
      }[];
      const deleted =
        (await tx.orm.delete(endpoints).where(eq(endpoints.id, id)).returning({ id: endpoints.id })).length > 0;
      if (deleted) await this.feed.record(tx, "endpoint", [id]);
      // After the delete, which waited for any enqueue to it: this sees that one's due work too.
      await tx.raw.unsafe("DELETE FROM due_deliveries WHERE endpoint_id = $1", [id]);
      await this.deletions.dropOrphanEvents(
        tx.raw,
        events.map((row) => row.event_id),
      );
      return deleted;
    });
    await this.changed([id]);
    return gone;
  }

  /** After a commit that changed these endpoints (a delete, a disable by an attempt). */
  async changed(ids: string[]): Promise<void> {
    await this.feed.serially(() => this.reload("endpoint", ids));
  }
}
