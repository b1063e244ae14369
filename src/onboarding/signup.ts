import { t } from "elysia";
import { assertPlanRoom, getAccount } from "../admin/operations.ts";
import { iso } from "../admin/views.ts";
import { AppError } from "../errors/catalog.ts";
import { connectable } from "../numbers/connect.ts";
import { randomId } from "../runtime/random.ts";
import type { Onboarding } from "../store/onboardings.ts";
import { preflightReceivers, type CoexistenceDeps } from "./coexistence.ts";
import { runSteps, SIGNUP_STEPS, type SignupDeps } from "./steps.ts";

const id = t.String({ minLength: 1, maxLength: 64, pattern: "^[0-9A-Za-z_-]+$" });
const pin = t.String({ pattern: "^[0-9]{6}$", description: "6 digits; the number's two-step verification PIN" });

/** What the signup popup reported, and the PIN the user chose. */
export const signupBody = t.Object({
  code: t.String({ minLength: 1, maxLength: 4096, description: "the authorization code the popup returned" }),
  waba_id: id,
  phone_number_id: id,
  pin: t.Optional(pin),
  coexistence: t.Optional(t.Boolean({ description: "the popup ran the business app's onboarding: the number stays on the app" })),
}, { additionalProperties: false });

export const retryBody = t.Object({ pin: t.Optional(pin) }, { additionalProperties: false });

export type SignupInput = typeof signupBody.static;

function enabled(deps: SignupDeps): void {
  if (!deps.config.embeddedSignup) throw new AppError("not_found", "Embedded Signup is not enabled on this server (EMBEDDED_SIGNUP_APP_ID and EMBEDDED_SIGNUP_CONFIG_ID).");
}

/** An onboarding of this account; another account's is "not found", exactly like a missing one. */
export async function accountOnboarding(deps: SignupDeps, accountId: string, onboardingId: string): Promise<Onboarding> {
  const o = await deps.store.onboardings.get(onboardingId);
  if (!o || o.accountId !== accountId) throw new AppError("not_found", `No signup ${onboardingId}.`);
  return o;
}

/**
 * Starts (or resumes) the server's half of Embedded Signup for what the popup reported: refuses
 * before anything is called or stored when the number or WABA is another account's or the plan
 * has no room, then runs the steps. Signing up the same number again resumes its onboarding with
 * the new code, so nothing is created twice; once finished, a new signup runs every step again
 * (a new token for a WABA whose token was revoked).
 */
export async function startSignup(deps: CoexistenceDeps, accountId: string, input: SignupInput): Promise<Onboarding> {
  enabled(deps);
  const kind = input.coexistence ? "coexistence" : "embedded";
  if (kind === "embedded" && input.pin === undefined) throw new AppError("invalid_request", "Choose a 6-digit PIN to register the number with.");
  const account = getAccount(deps, accountId);
  const { number, waba } = connectable(deps, accountId, input.phone_number_id, input.waba_id);
  if (waba && waba.appSecret !== null) throw new AppError("conflict", `WABA ${input.waba_id} is connected as a bring-your-own WABA with its own app.`);
  const existing = await deps.store.onboardings.byNumber(input.phone_number_id);
  if (existing && existing.accountId !== accountId) throw new AppError("conflict", `Number ${input.phone_number_id} is being connected by another account.`);
  if (!number || number.status === "disconnected") assertPlanRoom(deps, account);

  const now = deps.clock.now();
  const fresh: Onboarding = {
    id: randomId(deps.random, "sgn"), accountId, phoneNumberId: input.phone_number_id, wabaId: input.waba_id, kind,
    code: input.code, accessToken: null, pin: input.pin ?? null, steps: {}, preflights: {}, syncs: {}, finishedAt: null, leaseUntil: null, createdAt: now, updatedAt: now,
  };
  const o = existing ?? await deps.store.onboardings.create(fresh);
  // A new code from the popup for a number already onboarding: the steps run again from the
  // exchange (a finished onboarding keeps its syncs and pre-flights). The same code again (a
  // double submit) resumes instead.
  const again = (leased: Onboarding) => {
    if (leased.code === input.code) return;
    Object.assign(leased, { code: input.code, pin: input.pin ?? null, kind, wabaId: input.waba_id, steps: {}, accessToken: null, updatedAt: now });
  };
  return run(deps, o.id, o.id === fresh.id ? undefined : again);
}

/** Runs the steps; a coexistence number just onboarded gets its syncs' pre-flights at once. */
async function run(deps: CoexistenceDeps, id: string, change?: (o: Onboarding) => void): Promise<Onboarding> {
  let firstFinish = false;
  const o = await runSteps(deps, id, (leased) => {
    firstFinish = leased.finishedAt === null;
    change?.(leased);
  });
  if (firstFinish && o.finishedAt !== null && o.kind === "coexistence") await preflightReceivers(deps, o);
  return o;
}

/** Runs a failed signup's steps again from the one that failed (with a new PIN if given). */
export async function retrySignup(deps: CoexistenceDeps, accountId: string, onboardingId: string, input: typeof retryBody.static): Promise<Onboarding> {
  enabled(deps);
  await accountOnboarding(deps, accountId, onboardingId);
  return run(deps, onboardingId, (o) => {
    if (input.pin !== undefined && o.steps.register?.status !== "done") o.pin = input.pin;
  });
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
        status: outcome?.status ?? "waiting",
        at: iso(outcome?.at ?? null),
        detail: outcome?.status === "failed" ? null : outcome?.detail ?? null,
        error: outcome?.status === "failed" ? { reason: outcome.reason, code: outcome.code ?? null, advice: step.advice } : null,
      };
    }),
    finished_at: iso(o.finishedAt),
    created_at: iso(o.createdAt),
  };
}

export type SignupView = ReturnType<typeof signupView>;
