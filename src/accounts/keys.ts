import { changesOf } from "../audit/changes.ts";
import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { orNotFound } from "../errors/not-found.ts";
import { randomId } from "../runtime/random.ts";
import type { ApiKey } from "../store/types.ts";
import { getAccount } from "./accounts.ts";
import { displayPrefix, generateApiKey, hashApiKey } from "./api-key.ts";
import type { CreateApiKeyInput } from "./schemas.ts";

/** An account's API keys, as plain functions the operator API, the CLI and the dashboard call. */
type KeyDeps = Pick<Deps, "store" | "clock" | "random">;

/** Creates a key; the plain key is returned only here and never stored. */
export async function createApiKey(
  deps: KeyDeps,
  accountId: string,
  input: CreateApiKeyInput,
  by: AuditContext,
): Promise<{ key: string; record: ApiKey }> {
  getAccount(deps, accountId);
  const key = generateApiKey(deps.random, input.mode);
  const record: ApiKey = {
    id: randomId(deps.random, "key"),
    accountId,
    mode: input.mode,
    name: input.name ?? null,
    prefix: displayPrefix(key),
    keyHash: hashApiKey(key),
    createdAt: deps.clock.now(),
    revokedAt: null,
  };
  // The hash is derived from the key: never in the entry.
  const { keyHash: _, ...shown } = record;
  const object = { kind: "api_key", id: record.id };
  const entry = auditEntry(deps, by, "api_key.create", object, accountId, changesOf(null, shown));
  return { key, record: await deps.store.directory.createApiKey(record, entry) };
}

/** Revokes a key; `accountId` scopes the look-up for the dashboard, where other accounts' keys are 404. */
export async function revokeApiKey(deps: KeyDeps, id: string, by: AuditContext, accountId?: string): Promise<ApiKey> {
  const key = deps.store.directory.apiKey(id);
  if (!key || (accountId !== undefined && key.accountId !== accountId))
    throw new AppError("not_found", `No API key ${id}.`);
  const now = deps.clock.now();
  const object = { kind: "api_key", id };
  const entry = auditEntry(deps, by, "api_key.revoke", object, key.accountId, changesOf(key, { revokedAt: now }));
  return orNotFound(await deps.store.directory.revokeApiKey(id, now, entry), `API key ${id}`);
}
