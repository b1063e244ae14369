import { applySync, createNumber, createWaba, getAccount } from "../admin/operations.ts";
import { graphCall, type GraphResult } from "../numbers/graph-call.ts";
import { fetchNumberDetails, type SyncResult } from "../numbers/sync.ts";
import type { Deps } from "../runtime/deps.ts";
import type { Onboarding, StepName, StepOutcome } from "../store/onboardings.ts";
import { NO_CAUSE } from "../store/types.ts";
import { AppError } from "../errors/catalog.ts";

export type SignupDeps = Pick<Deps, "store" | "clock" | "random" | "config" | "fetch" | "logger">;

/** What one run of the steps carries from one to the next (a resumed run reads the number again). */
interface RunState {
  details?: SyncResult;
}

type StepResult = { status: "done"; detail?: string } | { status: "skipped"; detail: string } | { status: "failed"; reason: string; code?: number };

interface Step {
  name: StepName;
  label: string;
  /** What to do when it failed, in words, after the platform's reason. */
  advice: string;
  run(deps: SignupDeps, o: Onboarding, state: RunState): Promise<StepResult>;
}

const failed = (result: Extract<GraphResult | SyncResult, { ok: false }>): StepResult => ({ status: "failed", reason: result.reason, ...(result.fault ? { code: result.fault.code } : {}) });
const token = (o: Onboarding) => ({ accessToken: o.accessToken!, appSecret: null });

/**
 * Embedded Signup's server steps (issue 20), in order: data the runner walks, resuming at the
 * first step not done. Each step is safe to run again: the platform answers a second
 * subscription or registration as it did the first, and the last step updates what it finds.
 */
export const SIGNUP_STEPS: readonly Step[] = [
  {
    name: "exchange",
    label: "Exchange the authorization code for the business's token",
    advice: "An authorization code works once and only for a few minutes: click “Connect with the platform” again for a new one.",
    async run(deps, o) {
      const app = deps.config.embeddedSignup!;
      const result = await graphCall(deps, {
        method: "GET", path: "oauth/access_token", query: { client_id: app.appId, client_secret: deps.config.appSecret, code: o.code ?? "" },
      });
      if (!result.ok) return failed(result);
      if (typeof result.body.access_token !== "string" || result.body.access_token === "") return { status: "failed", reason: "upstream answered without an access token" };
      // The code stays (sealed): the same code sent again is then known as a repeat, not a new signup.
      o.accessToken = result.body.access_token;
      return { status: "done" };
    },
  },
  {
    name: "subscribe",
    label: "Subscribe the service to the WABA's webhooks",
    advice: "Try again. If it keeps failing, the business may have removed the service's access to this WABA: connect again.",
    async run(deps, o) {
      const result = await graphCall(deps, { method: "POST", path: `${encodeURIComponent(o.wabaId)}/subscribed_apps`, token: token(o) });
      return result.ok ? { status: "done" } : failed(result);
    },
  },
  {
    name: "register",
    label: "Register the number for the API with your PIN",
    advice: "If the number already has two-step verification, its PIN is the one to give. Change the PIN if needed and try again.",
    async run(deps, o) {
      // A coexistence number stays registered on the business app: registering it would take it off.
      if (o.kind === "coexistence") return { status: "skipped", detail: "not needed: the number stays on the business app" };
      const result = await graphCall(deps, {
        method: "POST", path: `${encodeURIComponent(o.phoneNumberId)}/register`, token: token(o),
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
      try {
        await saveNumber(deps, o, state.details ?? await fetchNumberDetails(deps, { phoneNumberId: o.phoneNumberId }, token(o)));
      } catch (error) {
        if (error instanceof AppError) return { status: "failed", reason: error.message };
        throw error;
      }
      return { status: "done" };
    },
  },
];

/** Stores the WABA (the token sealed, the service's app) and the number, or updates what is there: a second signup gives a new token. */
async function saveNumber(deps: SignupDeps, o: Onboarding, details: SyncResult): Promise<void> {
  const now = deps.clock.now();
  getAccount(deps, o.accountId);
  const waba = deps.store.directory.waba(o.wabaId);
  if (waba) {
    await deps.store.directory.updateWaba(o.wabaId, { status: "connected", ...NO_CAUSE, accessToken: o.accessToken!, updatedAt: now });
  } else {
    await createWaba(deps, o.accountId, { waba_id: o.wabaId, access_token: o.accessToken! });
  }
  const number = deps.store.directory.number(o.phoneNumberId);
  if (!number) {
    await createNumber(deps, o.accountId, { phone_number_id: o.phoneNumberId, waba_id: o.wabaId, kind: o.kind }, details);
    return;
  }
  if (number.status === "disconnected") await deps.store.directory.updateNumber(o.phoneNumberId, { status: "connected", ...NO_CAUSE, updatedAt: now });
  await applySync(deps, o.phoneNumberId, details, { check: true });
}

/** How long a run may hold an onboarding: its five upstream calls time out well within it. */
export const RUN_LEASE_MS = 5 * 60_000;

/**
 * Runs the steps not done yet, in order, saving after each so that a crash or a failure resumes
 * there. A run holds the onboarding's lease, so a second one (another tab, a double submit) is
 * refused rather than interleaved; `change` is applied to the onboarding as leased.
 */
export async function runSteps(deps: SignupDeps, id: string, change?: (o: Onboarding) => void): Promise<Onboarding> {
  const started = deps.clock.now();
  const held = started + RUN_LEASE_MS;
  const o = await deps.store.onboardings.claim(id, started, held);
  if (!o) throw new AppError("conflict", "This signup is running already (in another tab or request): reload its page in a moment.");
  change?.(o);
  const save = async (release: boolean) => {
    o.leaseUntil = release ? null : held;
    if (!(await deps.store.onboardings.saveRun(o, held))) throw new AppError("conflict", "This signup took too long and another run took it over: reload its page.");
  };
  try {
    const state: RunState = {};
    for (const step of SIGNUP_STEPS) {
      const before = o.steps[step.name]?.status;
      if (before === "done" || before === "skipped") continue;
      const result = await step.run(deps, o, state);
      const at = deps.clock.now();
      o.steps[step.name] = { ...result, at } as StepOutcome;
      o.updatedAt = at;
      if (result.status === "failed") {
        deps.logger.warn("embedded signup step failed", { onboarding_id: o.id, step: step.name, reason: result.reason });
        break;
      }
      if (step.name === "save") o.finishedAt = at;
      await save(false);
    }
  } finally {
    await save(true);
  }
  return o;
}
