import { expect } from "bun:test";
import type { AuditView } from "../../src/audit/queries.ts";
import type { Row } from "../support/backend.ts";
import { admin } from "../support/harness.ts";

/** Every entry of the audit log (`GET /admin/audit` with `query`), newest first, all pages. */
export async function allEntries(url: string, query: Record<string, string> = {}): Promise<AuditView[]> {
  const entries: AuditView[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ ...query, limit: "200", ...(cursor ? { cursor } : {}) });
    const r = await admin(url, "GET", `/admin/audit?${params}`);
    if (r.status !== 200) throw new Error(`GET /admin/audit: ${r.status} ${await r.text()}`);
    const page = (await r.json()) as { data: AuditView[]; next_cursor: string | null };
    entries.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return entries;
}

const order = (a: AuditView, b: AuditView) =>
  a.at!.localeCompare(b.at!) ||
  a.action.localeCompare(b.action) ||
  a.object.id.localeCompare(b.object.id) ||
  a.id.localeCompare(b.id);

/**
 * The audit log as a test walks through changes: `fresh()` gives the entries written since its last
 * call, oldest first (those of one time by action, then object), so each step asserts exactly the
 * entries it made and no more.
 */
export function auditTrail(url: string) {
  const seen = new Set<string>();
  return {
    async fresh(): Promise<AuditView[]> {
      const added = (await allEntries(url)).filter((e) => !seen.has(e.id));
      for (const e of added) seen.add(e.id);
      return added.sort(order);
    },
    /** Asserts that `step` wrote no entry (a change refused, or nothing changed). */
    async none(step: () => Promise<Response | { status: number }>, status: number): Promise<void> {
      await this.fresh();
      expect((await step()).status).toBe(status);
      expect(await this.fresh()).toEqual([]);
    },
  };
}

/** The actor of the operator API's token, from the tests' own address. */
export const TOKEN = { kind: "operator_token", id: "admin_token" } as const;
export const LOOPBACK = "127.0.0.1";

/** Secrets a test handled, to be found in no entry. */
export class Secrets {
  private readonly known = new Set<string>();
  add(...secrets: (string | null | undefined)[]): void {
    for (const s of secrets) if (s) this.known.add(s);
  }
  get size(): number {
    return this.known.size;
  }
  /** No entry, as the API gives it or as stored, holds any of them. */
  expectAbsent(entries: AuditView[], rows: Row[]): void {
    const texts = [JSON.stringify(entries), JSON.stringify(rows)];
    for (const secret of this.known) for (const text of texts) expect(text.includes(secret) ? secret : null).toBeNull();
  }
}
