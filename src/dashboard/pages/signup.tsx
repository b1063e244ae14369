import { escapeHtml } from "@kitajs/html";
import type { SignupView } from "../../onboarding/signup.ts";
import { Badge, Notice, Time, type Tone } from "../../html/components.tsx";

/** What the Numbers page's "Connect with the platform" needs: the SDK and what to tell it. */
export interface SignupSettings {
  appId: string;
  configId: string;
  sdkUrl: string;
  /** Where the popup's messages may come from, space-separated. */
  origins: string;
  /** The API version the SDK is initialised with. */
  version: string;
  /** The SDK's feature type for the business app's onboarding (coexistence). */
  coexistenceFeature: string;
}

/**
 * "Connect with the platform": signup.js loads the platform's SDK, opens its signup popup, and
 * posts this form with the code and the ids the popup reported. The PIN is asked for first, so
 * that the code (which expires in minutes) is used at once.
 */
export function SignupPanel(props: { settings: SignupSettings; message?: string }) {
  const s = props.settings;
  return (
    <section
      class="panel"
      aria-labelledby="signup-heading"
      data-signup
      data-app-id={s.appId}
      data-config-id={s.configId}
      data-sdk-url={s.sdkUrl}
      data-origins={s.origins}
      data-version={s.version}
      data-coexistence-feature={s.coexistenceFeature}
    >
      <h2 id="signup-heading">Connect with the platform</h2>
      <p class="small">
        Sign in to the platform in its own window and choose the business account and number there; Switchboard then
        connects the number and shows each step. No ids or tokens to copy.
      </p>
      {props.message ? (
        <Notice tone="bad">
          <p safe>{props.message}</p>
        </Notice>
      ) : (
        ""
      )}
      <form method="post" action="/dashboard/numbers/signup" class="stack">
        <fieldset>
          <legend>Which number?</legend>
          <label class="choice">
            <input type="radio" name="mode" value="new" checked /> A new number for the API
          </label>
          <label class="choice">
            <input type="radio" name="mode" value="coexistence" /> A number already on the business app: it keeps
            working there (coexistence)
          </label>
        </fieldset>
        <div>
          <label for="signup-pin">
            PIN
            <span class="hint" id="signup-pin-hint">
              6 digits to register a new number with; its two-step verification PIN if it has one. Not needed for
              coexistence.
            </span>
          </label>
          <input
            type="text"
            id="signup-pin"
            name="pin"
            inputmode="numeric"
            pattern="[0-9]{6}"
            maxlength="6"
            autocomplete="off"
            aria-describedby="signup-pin-hint"
          />
        </div>
        <input type="hidden" name="code" />
        <input type="hidden" name="waba_id" />
        <input type="hidden" name="phone_number_id" />
        <input type="hidden" name="coexistence" />
        <div>
          <button type="button" data-signup-start disabled>
            Connect with the platform
          </button>
        </div>
        <p class="small" role="status" aria-live="polite" data-signup-status>
          Loading the platform's signup…
        </p>
      </form>
      <script type="module" src="/dashboard/assets/signup.js"></script>
    </section>
  );
}

const STEP_BADGES: Record<SignupView["steps"][number]["status"], { tone: Tone; text: string }> = {
  done: { tone: "ok", text: "Done" },
  skipped: { tone: "plain", text: "Not needed" },
  failed: { tone: "bad", text: "Failed" },
  waiting: { tone: "plain", text: "Not run yet" },
};

/** A signup's steps, each with its outcome in words; a failed one with why, what to do, and "Try again". */
export function SignupPage(props: { signup: SignupView; now: number }) {
  const s = props.signup;
  const failed = s.steps.find((step) => step.status === "failed");
  const base = `/dashboard/numbers/signups/${encodeURIComponent(s.id)}`;
  return (
    <>
      <h1>
        Connecting number{" "}
        <span class="mono" safe>
          {s.phone_number_id}
        </span>
      </h1>
      {s.status === "done" ? (
        <Notice tone="ok">
          <p>The number is connected{s.kind === "coexistence" ? " and stays on the business app" : ""}.</p>
          <p>
            <a href="/dashboard/numbers">See it on the Numbers page</a>
            {s.kind === "coexistence" ? (
              <>
                {" "}
                or{" "}
                <a href={`/dashboard/numbers/${encodeURIComponent(s.phone_number_id)}/coexistence`}>
                  sync its contacts and history
                </a>{" "}
                (within 24 hours)
              </>
            ) : (
              ""
            )}
            .
          </p>
        </Notice>
      ) : failed ? (
        <Notice tone="bad">
          <p>
            Step “<span safe>{failed.label}</span>” failed. Nothing before it needs doing again.
          </p>
        </Notice>
      ) : (
        <Notice tone="warn">
          <p>
            This signup stopped before it finished (the page was closed or the server restarted). Try again continues
            where it stopped.
          </p>
        </Notice>
      )}
      <ol class="steps">
        {s.steps.map((step) => (
          <li data-step={step.name}>
            <Badge {...STEP_BADGES[step.status]} /> <strong safe>{step.label}</strong>
            {step.at ? (
              <span class="small muted">
                {" "}
                · <Time at={step.at} now={props.now} />
              </span>
            ) : (
              ""
            )}
            {step.detail ? (
              <div class="small muted" safe>
                {step.detail}
              </div>
            ) : (
              ""
            )}
            {step.error ? (
              <div class="small">
                <p class="error-text" safe>
                  {step.error.reason}
                </p>
                <p safe>{step.error.advice}</p>
              </div>
            ) : (
              ""
            )}
          </li>
        ))}
      </ol>
      {s.status !== "done" ? (
        <form method="post" action={`${base}/retry`} class="stack">
          {failed?.name === "register" ? (
            <div>
              <label for="retry-pin">
                PIN
                <span class="hint" id="retry-pin-hint">
                  Leave empty to use the same PIN again.
                </span>
              </label>
              <input
                type="text"
                id="retry-pin"
                name="pin"
                inputmode="numeric"
                pattern="[0-9]{6}"
                maxlength="6"
                autocomplete="off"
                aria-describedby="retry-pin-hint"
              />
            </div>
          ) : (
            ""
          )}
          <div>
            <button type="submit">Try again</button>{" "}
            <a class="button secondary" href="/dashboard/numbers">
              Back to numbers
            </a>
          </div>
        </form>
      ) : (
        ""
      )}
      <p class="small muted">
        Kind: {escapeHtml(s.kind === "coexistence" ? "coexistence (business app and API)" : "Embedded Signup")} · WABA{" "}
        <span class="mono" safe>
          {s.waba_id}
        </span>
      </p>
    </>
  );
}

/** Signups that stopped before the end (a failed step, a closed tab): each with where it stopped and a way back. */
export function UnfinishedSignups(props: { signups: SignupView[] }) {
  if (props.signups.length === 0) return "";
  return (
    <section class="panel" aria-labelledby="unfinished-heading">
      <h2 id="unfinished-heading">Unfinished signups</h2>
      <ul>
        {props.signups.map((s) => {
          const failed = s.steps.find((step) => step.status === "failed");
          return (
            <li>
              Number{" "}
              <span class="mono" safe>
                {s.phone_number_id}
              </span>
              :{" "}
              {failed ? (
                <>
                  stopped at “<span safe>{failed.label}</span>”.
                </>
              ) : (
                "not finished."
              )}{" "}
              <a href={`/dashboard/numbers/signups/${encodeURIComponent(s.id)}`}>Continue</a>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
