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
): Promise<{ key: string; record: ApiKey }> {
  getAccount(deps, accountId);
  const key = generateApiKey(deps.random, input.mode);
  const record = await deps.store.directory.createApiKey({
    id: randomId(deps.random, "key"),
    accountId,
    mode: input.mode,
    name: input.name ?? null,
    prefix: displayPrefix(key),
    keyHash: hashApiKey(key),
    createdAt: deps.clock.now(),
    revokedAt: null,
  });
  return { key, record };
}

/** Revokes a key; `accountId` scopes the look-up for the dashboard, where other accounts' keys are 404. */
export async function revokeApiKey(deps: KeyDeps, id: string, accountId?: string): Promise<ApiKey> {
  const key = deps.store.directory.apiKey(id);
  if (!key || (accountId !== undefined && key.accountId !== accountId))
    throw new AppError("not_found", `No API key ${id}.`);
  return orNotFound(await deps.store.directory.revokeApiKey(id, deps.clock.now()), `API key ${id}`);
}
