import { t } from "elysia";
import { createHash } from "node:crypto";
import { getAccount } from "../accounts/accounts.ts";
import { changesOf } from "../audit/changes.ts";
import { auditEntry, type AuditContext } from "../audit/entry.ts";
import { assertPlanRoom } from "../numbers/numbers.ts";
import { iso } from "../http/iso-time.ts";
import type { EmbeddedSignupConfig } from "../config/config.ts";
import { AppError } from "../errors/catalog.ts";
import { rateLimitStep } from "../limits/fail-open.ts";
import { signupBucket } from "../limits/policy.ts";
import { connectable } from "../numbers/connect.ts";
import { randomId } from "../runtime/random.ts";
import type { AuditEntry } from "../store/audit.ts";
import { expired, type Onboarding } from "../store/onboardings.ts";
import { preflightReceivers, type CoexistenceDeps } from "./coexistence.ts";
import { cannotReadNumber, RUN_LEASE_MS, runSteps, SIGNUP_STEPS, type SignupDeps } from "./steps.ts";

const id = t.String({ minLength: 1, maxLength: 64, pattern: "^[0-9A-Za-z_-]+$" });
const pin = t.String({ pattern: "^[0-9]{6}$", description: "6 digits; the number's two-step verification PIN" });

/** What the signup popup reported, and the PIN the user chose. */
export const signupBody = t.Object(
  {
    code: t.String({ minLength: 1, maxLength: 4096, description: "the authorization code the popup returned" }),
    waba_id: id,
    phone_number_id: id,
    pin: t.Optional(pin),
    coexistence: t.Optional(
      t.Boolean({ description: "the popup ran the business app's onboarding: the number stays on the app" }),
    ),
  },
  { additionalProperties: false },
);

export const retryBody = t.Object({ pin: t.Optional(pin) }, { additionalProperties: false });

export type SignupInput = typeof signupBody.static;

function enabled(deps: SignupDeps): EmbeddedSignupConfig {
  if (!deps.config.embeddedSignup) {
    throw new AppError(
      "not_found",
      "Embedded Signup is not enabled on this server (EMBEDDED_SIGNUP_APP_ID and EMBEDDED_SIGNUP_CONFIG_ID).",
    );
  }
  return deps.config.embeddedSignup;
}

/** An onboarding of this account; another account's, or one that expired, is "not found", exactly like a missing one. */
export async function accountOnboarding(
  deps: SignupDeps,
  accountId: string,
  onboardingId: string,
): Promise<Onboarding> {
  const o = await deps.store.onboardings.get(onboardingId, deps.clock.now());
  if (!o || o.accountId !== accountId) throw new AppError("not_found", `No signup ${onboardingId}.`);
  return o;
}

const inWords = (seconds: number) => (seconds < 120 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`);

/** Why create stored nothing, in words. */
function notCreated(app: EmbeddedSignupConfig, refused: "held" | "too_many", phoneNumberId: string): AppError {
  if (refused === "held")
    return new AppError("conflict", `Number ${phoneNumberId} is being connected by another account.`);
  return new AppError(
    "too_many_signups",
    `This account has ${app.maxUnfinished} unfinished signups, the most it may have: ` +
      `finish one (Try again), or wait for one to expire (${inWords(app.expiryMs / 1000)} after its code came).`,
  );
}

/**
 * Takes a run from the account's signup bucket (starts and retries alike: each may exchange a code
 * in the service app's name), before anything else is done; 429 with Retry-After when it is empty.
 */
async function takeRun(deps: SignupDeps, app: EmbeddedSignupConfig, accountId: string): Promise<void> {
  const decision = await rateLimitStep(deps.limits.limiter, deps)(signupBucket(accountId, app.startsPerHour));
  if (decision.allowed) return;
  const wait = decision.retryAfterSeconds ?? 1;
  const message = `Signups are limited to ${app.startsPerHour} an hour per account, retries included; try again in ${inWords(wait)}.`;
  throw new AppError("signup_rate_limited", message, { "retry-after": String(wait) });
}

/**
 * Leases the account's onboarding for a run, recorded by `entry`, or says why not: gone (404) or a
 * run under way (409).
 */
async function claimRun(
  deps: SignupDeps,
  accountId: string,
  onboardingId: string,
  entry: AuditEntry,
): Promise<Onboarding> {
  const now = deps.clock.now();
  const o = await deps.store.onboardings.claim(onboardingId, accountId, now, now + RUN_LEASE_MS, entry);
  if (o) return o;
  await accountOnboarding(deps, accountId, onboardingId);
  throw new AppError(
    "conflict",
    "This signup is running already (in another tab or request): reload its page in a moment.",
  );
}

const hashCode = (code: string) => createHash("sha256").update(code).digest("hex");

/**
 * Starts (or resumes) the server's half of Embedded Signup for what the popup reported: refuses
 * before anything is called or stored when the account started too many lately, the number or
 * WABA is another account's, the plan has no room, another account's signup past the code
 * exchange holds the number, or the account has too many unfinished; then runs the steps. Signing
 * up the same number again resumes its onboarding with the new code, so nothing is created twice;
 * once finished, a new signup runs every step again (a new token for a WABA whose token was revoked).
 */
export async function startSignup(
  deps: CoexistenceDeps,
  accountId: string,
  input: SignupInput,
  by: AuditContext,
): Promise<Onboarding> {
  const app = enabled(deps);
  const kind: Onboarding["kind"] = input.coexistence ? "coexistence" : "embedded";
  if (kind === "embedded" && input.pin === undefined) {
    throw new AppError("invalid_request", "Choose a 6-digit PIN to register the number with.");
  }
  const account = getAccount(deps, accountId);
  await takeRun(deps, app, accountId);
  const { number } = connectable(deps, accountId, input.phone_number_id, input.waba_id, false);
  if (!number || number.status === "disconnected") assertPlanRoom(deps, account);

  const now = deps.clock.now();
  // What the popup reported; the code expires, and the number is held no more, after EMBEDDED_SIGNUP_EXPIRY.
  const popup = {
    code: input.code,
    codeHash: hashCode(input.code),
    pin: input.pin ?? null,
    kind,
    wabaId: input.waba_id,
    expiresAt: now + app.expiryMs,
  };
  const fresh: Onboarding = {
    id: randomId(deps.random, "sgn"),
    accountId,
    phoneNumberId: input.phone_number_id,
    ...popup,
    accessToken: null,
    steps: {},
    preflights: {},
    syncs: {},
    finishedAt: null,
    leaseUntil: now + RUN_LEASE_MS,
    createdAt: now,
    updatedAt: now,
  };
  const options = { now, numberIsTheirs: number !== undefined, maxUnfinished: app.maxUnfinished };
  // What the popup reported, the code and PIN named only as given.
  const changes = changesOf(null, {
    phoneNumberId: input.phone_number_id,
    wabaId: input.waba_id,
    kind,
    code: input.code,
    pin: popup.pin,
  });
  const started = (id: string) => auditEntry(deps, by, "signup.start", { kind: "onboarding", id }, accountId, changes);
  const created = await deps.store.onboardings.create(fresh, options, started(fresh.id));
  if ("refused" in created) throw notCreated(app, created.refused, input.phone_number_id);
  if (created.onboarding.id === fresh.id) return run(deps, fresh, by);
  // The account's own onboarding of the number: a new code from the popup runs the steps again from
  // the exchange (a finished one keeps its syncs and pre-flights); the same code again (a double
  // submit) resumes instead.
  const o = await claimRun(deps, accountId, created.onboarding.id, started(created.onboarding.id));
  if (o.codeHash !== popup.codeHash || expired(o, now))
    Object.assign(o, popup, { steps: {}, accessToken: null, updatedAt: now });
  return run(deps, o, by);
}

/**
 * Runs the steps; a coexistence number just onboarded gets its syncs' pre-flights at once. A token
 * that cannot read the number (another business's) is refused as such: the signup holds nothing.
 */
async function run(deps: CoexistenceDeps, leased: Onboarding, by: AuditContext): Promise<Onboarding> {
  const firstFinish = leased.finishedAt === null;
  const o = await runSteps(deps, leased, by);
  if (cannotReadNumber(o))
    throw new AppError(
      "number_not_readable",
      `The business that signed in cannot read number ${o.phoneNumberId}: connect with the platform again as the business the number belongs to.`,
    );
  if (firstFinish && o.finishedAt !== null && o.kind === "coexistence") await preflightReceivers(deps, o, by);
  return o;
}

/**
 * Runs a failed signup's steps again from the one that failed (with a new PIN if given), unless
 * its WABA or number has become another account's or its time ran out.
 */
export async function retrySignup(
  deps: CoexistenceDeps,
  accountId: string,
  onboardingId: string,
  input: typeof retryBody.static,
  by: AuditContext,
): Promise<Onboarding> {
  const app = enabled(deps);
  const found = await accountOnboarding(deps, accountId, onboardingId);
  await takeRun(deps, app, accountId);
  if (expired(found, deps.clock.now())) {
    throw new AppError(
      "conflict",
      "This signup's authorization expired and was dropped: connect with the platform again.",
    );
  }
  connectable(deps, accountId, found.phoneNumberId, found.wabaId, false);
  const newPin = input.pin !== undefined && found.steps.register?.status !== "done";
  const object = { kind: "onboarding", id: onboardingId };
  const changes = newPin ? changesOf(found, { pin: input.pin }) : {};
  const o = await claimRun(
    deps,
    accountId,
    onboardingId,
    auditEntry(deps, by, "signup.retry", object, accountId, changes),
  );
  if (input.pin !== undefined && o.steps.register?.status !== "done") o.pin = input.pin;
  return run(deps, o, by);
}

export type SignupStatus = "done" | "failed" | "pending";

export function signupStatus(o: Onboarding): SignupStatus {
  if (SIGNUP_STEPS.some((s) => o.steps[s.name]?.status === "failed")) return "failed";
  return o.finishedAt !== null && o.steps.save?.status === "done" ? "done" : "pending";
}

/** A signup as the API and the page show it: each step with its outcome in words. */
export function signupView(o: Onboarding) {
  return {
    id: o.id,
    phone_number_id: o.phoneNumberId,
    waba_id: o.wabaId,
    kind: o.kind,
    status: signupStatus(o),
    steps: SIGNUP_STEPS.map((step) => {
      const outcome = o.steps[step.name];
      return {
        name: step.name,
        label: step.label,
        status: outcome?.status ?? ("waiting" as const),
        at: iso(outcome?.at ?? null),
        detail: outcome?.status === "failed" ? null : (outcome?.detail ?? null),
        error:
          outcome?.status === "failed"
            ? { reason: outcome.reason, code: outcome.code ?? null, advice: step.advice }
            : null,
      };
    }),
    finished_at: iso(o.finishedAt),
    created_at: iso(o.createdAt),
  };
}

export type SignupView = ReturnType<typeof signupView>;
