import type { AuditContext } from "../audit/entry.ts";
import { connectNumber } from "../numbers/connect.ts";
import { graphCall, type GraphResult } from "../numbers/graph-call.ts";
import { fetchNumberDetails, type SyncResult } from "../numbers/sync.ts";
import type { Deps } from "../deps.ts";
import { NO_SECRETS, type Onboarding, type StepName, type StepOutcome } from "../store/onboardings.ts";
import { AppError } from "../errors/catalog.ts";

export type SignupDeps = Pick<
  Deps,
  "store" | "clock" | "random" | "config" | "fetch" | "logger" | "limits" | "metrics"
>;

/** What one run of the steps carries from one to the next (a resumed run reads the number again). */
interface RunState {
  /** Who started the run: the number's connection is recorded as theirs. */
  by: AuditContext;
  details?: SyncResult;
}

type StepResult =
  | { status: "done"; detail?: string }
  | { status: "skipped"; detail: string }
  | { status: "failed"; reason: string; code?: number };

interface Step {
  name: StepName;
  label: string;
  /** What to do when it failed, in words, after the platform's reason. */
  advice: string;
  run(deps: SignupDeps, o: Onboarding, state: RunState): Promise<StepResult>;
}

const failed = (result: Extract<GraphResult | SyncResult, { ok: false }>): StepResult => ({
  status: "failed",
  reason: result.reason,
  ...(result.fault ? { code: result.fault.code } : {}),
});
/** The business's token, which the exchange step (always before the steps that call this) stored. */
function token(o: Onboarding): { accessToken: string; appSecret: null } {
  if (o.accessToken === null) throw new Error(`onboarding ${o.id} has no token: its exchange step has not run`);
  return { accessToken: o.accessToken, appSecret: null };
}

/** The platform's error for an object a token cannot see: absent, or another business's. */
export const NOT_VISIBLE = 100;

/** Why an exchange failed whose token cannot read the number. */
const notReadable = (phoneNumberId: string) => `The business that signed in cannot read number ${phoneNumberId}`;

/** Whether the last run failed because its token could not read the number: then it holds nothing. */
export function cannotReadNumber(o: Onboarding): boolean {
  const outcome = o.steps.exchange;
  return outcome?.status === "failed" && outcome.reason === notReadable(o.phoneNumberId);
}

/** The popup's code for the business's token (spent either way: only its hash stays). */
async function exchangeCode(deps: SignupDeps, o: Onboarding): Promise<StepResult> {
  const app = deps.config.embeddedSignup;
  if (!app) return { status: "failed", reason: "Embedded Signup is not enabled on this server" };
  const result = await graphCall(deps, {
    method: "GET",
    path: "oauth/access_token",
    query: { client_id: app.appId, client_secret: deps.config.appSecret, code: o.code ?? "" },
  });
  if (!result.ok) return failed(result);
  if (typeof result.body.access_token !== "string" || result.body.access_token === "")
    return { status: "failed", reason: "upstream answered without an access token" };
  o.accessToken = result.body.access_token;
  // Spent: only its hash stays, to know the same code sent again as a repeat, not a new signup.
  o.code = null;
  return { status: "done" };
}

/**
 * Embedded Signup's server steps (issue 20), in order: data the runner walks, resuming at the
 * first step not done. Each step is safe to run again: the platform answers a second
 * subscription or registration as it did the first, and the last step updates what it finds.
 */
export const SIGNUP_STEPS: readonly Step[] = [
  {
    name: "exchange",
    label: "Exchange the authorization code for the business's token, and read the number with it",
    advice:
      "An authorization code works once and only for a few minutes: click “Connect with the platform” again for a new one, signed in as the business the number belongs to.",
    async run(deps, o) {
      if (o.accessToken === null) {
        const exchanged = await exchangeCode(deps, o);
        if (exchanged.status === "failed") return exchanged;
      }
      // The code says nothing of which number it is for: only a token that reads the number proves
      // it is the business's, and until then the signup holds no number (yieldsTo).
      const read = await fetchNumberDetails(deps, { phoneNumberId: o.phoneNumberId }, token(o));
      if (read.ok) return { status: "done" };
      if (read.fault?.code !== NOT_VISIBLE) return failed(read); // the token kept: Try again reads again
      o.accessToken = null;
      return { status: "failed", reason: notReadable(o.phoneNumberId), code: NOT_VISIBLE };
    },
  },
  {
    name: "subscribe",
    label: "Subscribe the service to the WABA's webhooks",
    advice:
      "Try again. If it keeps failing, the business may have removed the service's access to this WABA: connect again.",
    async run(deps, o) {
      const result = await graphCall(deps, {
        method: "POST",
        path: `${encodeURIComponent(o.wabaId)}/subscribed_apps`,
        token: token(o),
      });
      return result.ok ? { status: "done" } : failed(result);
    },
  },
  {
    name: "register",
    label: "Register the number for the API with your PIN",
    advice:
      "If the number already has two-step verification, its PIN is the one to give. Change the PIN if needed and try again.",
    async run(deps, o) {
      // A coexistence number stays registered on the business app: registering it would take it off.
      if (o.kind === "coexistence")
        return { status: "skipped", detail: "not needed: the number stays on the business app" };
      const result = await graphCall(deps, {
        method: "POST",
        path: `${encodeURIComponent(o.phoneNumberId)}/register`,
        token: token(o),
        json: { messaging_product: deps.config.platform.product, pin: o.pin ?? "" },
      });
      if (!result.ok) return failed(result);
      o.pin = null;
      return { status: "done" };
    },
  },
  {
    name: "sync",
    label: "Read the number's details",
    advice: "Try again in a moment; the platform can take a little while to show a number just registered.",
    async run(deps, o, state) {
      state.details = await fetchNumberDetails(deps, { phoneNumberId: o.phoneNumberId }, token(o));
      if (!state.details.ok) return failed(state.details);
      return { status: "done", detail: `throughput level ${state.details.details.throughputLevel}` };
    },
  },
  {
    name: "save",
    label: "Save the WABA and the number",
    advice: "Try again once the account has room for another number.",
    async run(deps, o, state) {
      const connection = {
        phoneNumberId: o.phoneNumberId,
        wabaId: o.wabaId,
        kind: o.kind,
        ...token(o),
      };
      try {
        // One write that checks again that the WABA and the number are free or the account's (issue 26).
        const details = state.details ?? (await fetchNumberDetails(deps, { phoneNumberId: o.phoneNumberId }, token(o)));
        await connectNumber(deps, o.accountId, connection, details, state.by, { reconnect: true });
      } catch (error) {
        if (error instanceof AppError) return { status: "failed", reason: error.message };
        throw error;
      }
      return { status: "done" };
    },
  },
];

/** How long a run may hold an onboarding: its five upstream calls time out well within it. */
export const RUN_LEASE_MS = 5 * 60_000;

/**
 * Runs the steps not done yet on an onboarding this run has leased (its `leaseUntil`), in order,
 * saving after each so that a crash or a failure resumes there; every save is fenced on the lease,
 * so a run that lost it stops. Once finished, nothing is pending: no expiry, no token kept.
 */
export async function runSteps(deps: SignupDeps, o: Onboarding, by: AuditContext): Promise<Onboarding> {
  const held = o.leaseUntil;
  if (held === null) throw new Error(`onboarding ${o.id} runs without a lease`);
  const save = async (release: boolean) => {
    o.leaseUntil = release ? null : held;
    if (!(await deps.store.onboardings.saveRun(o, held)))
      throw new AppError("conflict", "This signup took too long and another run took it over: reload its page.");
  };
  try {
    const state: RunState = { by };
    for (const step of SIGNUP_STEPS) {
      const before = o.steps[step.name]?.status;
      if (before === "done" || before === "skipped") continue;
      const result = await step.run(deps, o, state);
      const at = deps.clock.now();
      o.steps[step.name] = { ...result, at } as StepOutcome;
      o.updatedAt = at;
      if (result.status === "failed") {
        deps.logger.warn("embedded signup step failed", {
          onboarding_id: o.id,
          step: step.name,
          reason: result.reason,
        });
        break;
      }
      if (step.name === "save") Object.assign(o, { finishedAt: at, expiresAt: null, ...NO_SECRETS });
      await save(false);
    }
  } finally {
    await save(true);
  }
  return o;
}
