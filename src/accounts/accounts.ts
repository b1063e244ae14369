import { changesOf } from "../audit/changes.ts";
import { auditEntry, changeEntry, type AuditContext } from "../audit/entry.ts";
import { hashPassword } from "../crypto/password.ts";
import { AppError } from "../errors/catalog.ts";
import type { Deps } from "../deps.ts";
import { orNotFound } from "../errors/not-found.ts";
import { randomId } from "../runtime/random.ts";
import type { AuditAction } from "../store/audit.ts";
import { userRow, type Account, type NewUser, type User } from "../store/types.ts";
import type { CreateAccountInput, CreateUserInput, UpdateAccountInput } from "./schemas.ts";

/**
 * The operator's operations on accounts and their dashboard users (docs/operations.md#provisioning) as plain functions:
 * the operator API, the CLI and the dashboard all call these, so they can never disagree. Each change
 * is made by someone (`by`), and the store writes its audit entry with it.
 */
type AccountDeps = Pick<Deps, "store" | "clock" | "random">;

export function getAccount(deps: Pick<AccountDeps, "store">, id: string): Account {
  const account = deps.store.directory.account(id);
  if (!account) throw new AppError("not_found", `No account ${id}.`);
  return account;
}

/** Every account, oldest first. */
export const listAccounts = (deps: Pick<AccountDeps, "store">): Account[] =>
  [...deps.store.directory.accounts()].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));

/** A new account's record and the entry of its creation, by `by`. */
function newAccount(deps: AccountDeps, input: CreateAccountInput, by: AuditContext) {
  const account: Account = {
    id: randomId(deps.random, "acc"),
    name: input.name,
    email: input.email,
    billingStatus: input.billing_status ?? "active",
    retention: input.retention ?? "24h",
    maxNumbers: input.max_numbers ?? null,
    createdAt: deps.clock.now(),
  };
  const object = { kind: "account", id: account.id };
  return { account, entry: auditEntry(deps, by, "account.create", object, account.id, changesOf(null, account)) };
}

export async function createAccount(deps: AccountDeps, input: CreateAccountInput, by: AuditContext): Promise<Account> {
  const { account, entry } = newAccount(deps, input, by);
  return deps.store.directory.createAccount(account, entry);
}

/** Changes an account; `account.update` by the operator, `settings.update` by the account itself. */
export async function updateAccount(
  deps: AccountDeps,
  id: string,
  input: UpdateAccountInput,
  by: AuditContext,
  action: Extract<AuditAction, "account.update" | "settings.update"> = "account.update",
): Promise<Account> {
  const account = getAccount(deps, id);
  const patch: Partial<Account> = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.email !== undefined) patch.email = input.email;
  if (input.billing_status !== undefined) patch.billingStatus = input.billing_status;
  if (input.retention !== undefined) patch.retention = input.retention;
  if (input.max_numbers !== undefined) patch.maxNumbers = input.max_numbers;
  const entry = changeEntry(deps, by, action, { kind: "account", id }, id, changesOf(account, patch));
  return orNotFound(await deps.store.directory.updateAccount(id, patch, entry), `account ${id}`);
}

const emailTaken = (email: string) => new AppError("conflict", `A dashboard user with email ${email} already exists.`);

/** A new user's record (its password hashed) and the entry of its creation; a taken email is refused first, to spare the hash. */
async function newUser(deps: AccountDeps, accountId: string, input: CreateUserInput, by: AuditContext) {
  if (await deps.store.users.byEmail(input.email)) throw emailTaken(input.email);
  const id = randomId(deps.random, "usr");
  const entry = auditEntry(deps, by, "user.create", { kind: "user", id }, accountId, {
    email: [null, input.email.toLowerCase()],
  });
  const user: NewUser = {
    id,
    accountId,
    email: input.email,
    passwordHash: await hashPassword(input.password),
    createdAt: deps.clock.now(),
  };
  return { user, entry };
}

export async function createUser(
  deps: AccountDeps,
  accountId: string,
  input: CreateUserInput,
  by: AuditContext,
): Promise<User> {
  getAccount(deps, accountId);
  const { user, entry } = await newUser(deps, accountId, input, by);
  // The insert decides when two requests create the same email at once.
  const created = await deps.store.users.create(user, entry);
  if (!created) throw emailTaken(input.email);
  return created;
}

/**
 * A new account and its first dashboard login as one change: when the email is taken, even by a
 * request that won a race with this one, neither is created and nothing is recorded.
 */
export async function createAccountWithUser(
  deps: AccountDeps,
  input: CreateAccountInput,
  login: CreateUserInput,
  by: AuditContext,
): Promise<{ account: Account; user: User }> {
  const made = newAccount(deps, input, by);
  const { user, entry } = await newUser(deps, made.account.id, login, by);
  const account = await deps.store.directory.createAccountWithUser(made.account, user, {
    account: made.entry,
    user: entry,
  });
  if (!account) throw emailTaken(login.email);
  return { account, user: { ...userRow(user), lastSignInAt: null } };
}
