import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { createAccount, createUser, getAccount, listAccounts, updateAccount } from "../accounts/accounts.ts";
import { deleteUser, listUsers, resetPasswordBody, resetUserPassword } from "../accounts/logins.ts";
import { createApiKey, revokeApiKey } from "../accounts/keys.ts";
import {
  createAccountBody,
  type CreateAccountInput,
  createApiKeyBody,
  type CreateApiKeyInput,
  createUserBody,
  type CreateUserInput,
  updateAccountBody,
  type UpdateAccountInput,
} from "../accounts/schemas.ts";
import { accountView, apiKeyView, userView } from "../accounts/views.ts";
import { createNumber, getNumber, syncNumber, updateNumber } from "../numbers/numbers.ts";
import {
  createNumberBody,
  type CreateNumberInput,
  createWabaBody,
  type CreateWabaInput,
  updateNumberBody,
  type UpdateNumberInput,
  updateWabaBody,
  type UpdateWabaInput,
} from "../numbers/schemas.ts";
import { numberView, wabaView } from "../numbers/views.ts";
import { createWaba, getWaba, updateWaba } from "../numbers/wabas.ts";
import { recordedBackup } from "../backup/audit.ts";
import { createBackups } from "../backup/backups.ts";
import { BY_CLI } from "../audit/entry.ts";
import { auditQuery, auditView, listAudit } from "../audit/queries.ts";
import { AppError } from "../errors/catalog.ts";
import { fieldOf, ruleOf } from "../http/rules.ts";
import * as operators from "../operators/operations.ts";
import { deleteOnboarding, listOnboardings, onboardingQuery, onboardingView } from "../onboarding/operator.ts";
import { usage, usageQuery, usageView } from "../requests/queries.ts";

type OpDeps = Parameters<typeof createAccount>[0] &
  Parameters<typeof createNumber>[0] &
  Parameters<typeof createBackups>[0];

/** One `switchboard admin <noun> <verb>` command: its positional ids, its flags' schema and what it runs. */
interface Command {
  noun: string;
  verb: string;
  ids: string[];
  schema?: TSchema;
  summary: string;
  /** `id`: the command's one positional id, checked present by parseAdminCommand ("" when it takes none). */
  run(deps: OpDeps, id: string, body: never): Promise<unknown> | unknown;
}

const command = <B>(c: Omit<Command, "run"> & { run(deps: OpDeps, id: string, body: B): Promise<unknown> | unknown }) =>
  c as unknown as Command;

/**
 * The operator API (docs/operations.md#provisioning), on the command line; every command prints the JSON the HTTP call
 * answers.
 */
export const ADMIN_COMMANDS: Command[] = [
  command<CreateAccountInput>({
    noun: "accounts",
    verb: "create",
    ids: [],
    schema: createAccountBody,
    summary: "--name N --email E [--billing-status S] [--retention 24h|7d] [--max-numbers N|null]",
    run: async (d, _, b) => accountView(await createAccount(d, b, BY_CLI)),
  }),
  command<UpdateAccountInput>({
    noun: "accounts",
    verb: "update",
    ids: ["account_id"],
    schema: updateAccountBody,
    summary: "ACCOUNT_ID [any flag of create]",
    run: async (d, id, b) => accountView(await updateAccount(d, id, b, BY_CLI)),
  }),
  command({
    noun: "accounts",
    verb: "list",
    ids: [],
    summary: "(every account, oldest first)",
    run: (d) => ({ data: listAccounts(d).map(accountView) }),
  }),
  command({
    noun: "accounts",
    verb: "get",
    ids: ["account_id"],
    summary: "ACCOUNT_ID",
    run: (d, id) => accountView(getAccount(d, id)),
  }),
  command<CreateUserInput>({
    noun: "users",
    verb: "create",
    ids: ["account_id"],
    schema: createUserBody,
    summary: "ACCOUNT_ID --email E --password P",
    run: async (d, id, b) => userView(await createUser(d, id, b, BY_CLI)),
  }),
  command({
    noun: "users",
    verb: "list",
    ids: ["account_id"],
    summary: "ACCOUNT_ID (the account's dashboard logins, with their last sign-in)",
    run: async (d, id) => ({ data: (await listUsers(d, id)).map(userView) }),
  }),
  command<typeof resetPasswordBody.static>({
    noun: "users",
    verb: "reset-password",
    ids: ["user_id"],
    schema: resetPasswordBody,
    summary: "USER_ID --password P (every session of theirs ends)",
    run: async (d, id, b) => userView(await resetUserPassword(d, id, b, BY_CLI)),
  }),
  command({
    noun: "users",
    verb: "delete",
    ids: ["user_id"],
    summary: "USER_ID (the login is removed; its sessions end)",
    run: async (d, id) => userView(await deleteUser(d, id, BY_CLI)),
  }),
  command<CreateApiKeyInput>({
    noun: "api-keys",
    verb: "create",
    ids: ["account_id"],
    schema: createApiKeyBody,
    summary: "ACCOUNT_ID --mode live|test [--name N]",
    run: async (d, id, b) => {
      const { key, record } = await createApiKey(d, id, b, BY_CLI);
      return { ...apiKeyView(record), key };
    },
  }),
  command({
    noun: "api-keys",
    verb: "revoke",
    ids: ["key_id"],
    summary: "KEY_ID",
    run: async (d, id) => apiKeyView(await revokeApiKey(d, id, BY_CLI)),
  }),
  command<CreateWabaInput>({
    noun: "wabas",
    verb: "create",
    ids: ["account_id"],
    schema: createWabaBody,
    summary: "ACCOUNT_ID --waba-id W --access-token T [--app-secret S]",
    run: async (d, id, b) => wabaView(await createWaba(d, id, b, BY_CLI)),
  }),
  command<UpdateWabaInput>({
    noun: "wabas",
    verb: "update",
    ids: ["waba_id"],
    schema: updateWabaBody,
    summary: "WABA_ID [--status connected|disconnected|token_revoked] [--access-token T]",
    run: async (d, id, b) => wabaView(await updateWaba(d, id, b, BY_CLI)),
  }),
  command({
    noun: "wabas",
    verb: "get",
    ids: ["waba_id"],
    summary: "WABA_ID",
    run: (d, id) => wabaView(getWaba(d, id)),
  }),
  command<CreateNumberInput>({
    noun: "numbers",
    verb: "create",
    ids: ["account_id"],
    schema: createNumberBody,
    summary: "ACCOUNT_ID --phone-number-id P --waba-id W --kind sandbox|byo|embedded|coexistence",
    run: async (d, id, b) => numberView(await createNumber(d, id, b, BY_CLI)),
  }),
  command<UpdateNumberInput>({
    noun: "numbers",
    verb: "update",
    ids: ["phone_number_id"],
    schema: updateNumberBody,
    summary: "PHONE_NUMBER_ID --status connected|disconnected|restricted|flagged|not_registered",
    run: async (d, id, b) => numberView(await updateNumber(d, id, b, BY_CLI)),
  }),
  command({
    noun: "numbers",
    verb: "get",
    ids: ["phone_number_id"],
    summary: "PHONE_NUMBER_ID",
    run: (d, id) => numberView(getNumber(d, id)),
  }),
  command<typeof usageQuery.static>({
    noun: "usage",
    verb: "list",
    ids: [],
    schema: usageQuery,
    summary:
      "--from T [--to T] [--account-id A] (calls per hour per number: forwarded by row, errors by code; ISO times)",
    run: async (d, _, b) => {
      if (b.account_id) getAccount(d, b.account_id);
      return { data: (await usage(d, b.account_id || null, b.from, b.to)).map(usageView) };
    },
  }),
  command({
    noun: "numbers",
    verb: "sync",
    ids: ["phone_number_id"],
    summary: "PHONE_NUMBER_ID (re-read details from upstream)",
    run: async (d, id) => numberView(await syncNumber(d, id, { check: true, by: BY_CLI })),
  }),
  command<typeof onboardingQuery.static>({
    noun: "onboardings",
    verb: "list",
    ids: [],
    schema: onboardingQuery,
    summary: "[--account-id A] [--phone-number-id P] (Embedded Signup records, newest first)",
    run: async (d, _, b) => ({ data: (await listOnboardings(d, b)).map(onboardingView) }),
  }),
  command<typeof auditQuery.static>({
    noun: "audit",
    verb: "list",
    ids: [],
    schema: auditQuery,
    summary:
      "[--account-id A] [--action A] [--actor ID|EMAIL] [--object-kind K] [--object-id O] [--from T] [--to T] [--cursor C] (the audit log, newest first)",
    run: async (d, _, b) => {
      if (b.account_id) getAccount(d, b.account_id);
      const page = await listAudit(d, b);
      return { data: page.data.map(auditView), next_cursor: page.nextCursor };
    },
  }),
  command({
    noun: "onboardings",
    verb: "delete",
    ids: ["onboarding_id"],
    summary: "ONBOARDING_ID (its number is free for other accounts again)",
    run: async (d, id) => onboardingView(await deleteOnboarding(d, id, BY_CLI)),
  }),
  command({
    noun: "backups",
    verb: "list",
    ids: [],
    summary: "(the verified backups at BACKUP_TO, newest first, and where it looked)",
    run: async (d) => {
      const backups = createBackups(d);
      return { location: backups.target.where, data: await backups.list() };
    },
  }),
  command({
    noun: "backups",
    verb: "create",
    ids: [],
    summary: "(a backup to BACKUP_TO now, as switchboard backup; prints its manifest)",
    run: (d) => recordedBackup(d, createBackups(d).create(), BY_CLI),
  }),
  command<typeof operators.createOperatorBody.static>({
    noun: "operators",
    verb: "create",
    ids: [],
    schema: operators.createOperatorBody,
    summary: "--email E --password P (a person who signs in to the operator console at /operator)",
    run: async (d, _, b) => operators.operatorView(await operators.createOperator(d, b, BY_CLI)),
  }),
  command({
    noun: "operators",
    verb: "list",
    ids: [],
    summary: "(every operator, oldest first)",
    run: async (d) => ({ data: (await operators.listOperators(d)).map(operators.operatorView) }),
  }),
  command({
    noun: "operators",
    verb: "delete",
    ids: ["operator"],
    summary: "OPERATOR_ID|EMAIL (their sessions end)",
    run: async (d, id) => operators.operatorView(await operators.deleteOperator(d, id, BY_CLI)),
  }),
  command<typeof operators.resetOperatorPasswordBody.static>({
    noun: "operators",
    verb: "reset-password",
    ids: ["operator"],
    schema: operators.resetOperatorPasswordBody,
    summary: "OPERATOR_ID|EMAIL --password P (their sessions end)",
    run: async (d, id, b) => operators.operatorView(await operators.resetOperatorPassword(d, id, b, BY_CLI)),
  }),
];

/** A command line that does not fit any command: the caller prints it with the usage and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** node:util's parseArgs, its refusals (an unknown flag, a missing value) as a UsageError. */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function adminUsage(): string {
  return [
    "Usage: switchboard admin <noun> <verb> [ids] [--flags]",
    "",
    ...ADMIN_COMMANDS.map((c) => `  switchboard admin ${c.noun} ${c.verb} ${c.summary}`),
  ].join("\n");
}

/** `--max-numbers 5` → 5, `null` → null; every other flag stays text, so the schema decides. */
function flagValue(name: string, raw: string): unknown {
  if (name === "max_numbers") return raw === "null" ? null : /^\d+$/.test(raw) ? Number(raw) : raw;
  return raw;
}

const kebab = (field: string) => field.replaceAll("_", "-");
const fieldsOf = (c: Command) =>
  Object.keys((c.schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});

/** Every flag any command takes, each a string; parseArgs then rejects unknown flags and missing values. */
const FLAG_OPTIONS = Object.fromEntries(
  ADMIN_COMMANDS.flatMap(fieldsOf).map((field) => [kebab(field), { type: "string" as const }]),
);

/** Finds the command, turns `--kebab-flags` into the snake_case body the HTTP API takes, validates it. */
export function parseAdminCommand(argv: string[]): { command: Command; ids: string[]; body: Record<string, unknown> } {
  const parsed = parseFlags({ args: argv, options: FLAG_OPTIONS, allowPositionals: true });
  const [noun, verb, ...ids] = parsed.positionals;
  const found = ADMIN_COMMANDS.find((c) => c.noun === noun && c.verb === verb);
  if (!found) throw new UsageError(noun ? `unknown command: admin ${noun} ${verb ?? ""}`.trim() : "missing command");
  if (ids.length !== found.ids.length)
    throw new UsageError(`admin ${noun} ${verb} takes ${found.ids.join(" ") || "no ids"}`);
  const allowed = fieldsOf(found);
  const body: Record<string, unknown> = {};
  for (const [flag, raw] of Object.entries(parsed.values)) {
    const name = flag.replaceAll("-", "_");
    if (!allowed.includes(name)) throw new UsageError(`admin ${noun} ${verb} does not take --${flag}`);
    body[name] = flagValue(name, raw as string);
  }
  if (found.schema) {
    const first = Value.Errors(found.schema, body).First();
    if (first) {
      const where = first.path ? `--${kebab(fieldOf(first.path))}` : "flags";
      throw new AppError("invalid_request", `${where}: ${ruleOf(first)}`);
    }
  }
  return { command: found, ids, body };
}

export async function runAdminCommand(deps: OpDeps, argv: string[]): Promise<unknown> {
  const { command: found, ids, body } = parseAdminCommand(argv);
  // parseAdminCommand checked the count: no command takes more than one id, and "" only reaches one that takes none.
  const [id = ""] = ids;
  return found.run(deps, id, body as never);
}
