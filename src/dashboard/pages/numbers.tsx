import { escapeHtml } from "@kitajs/html";
import type { accountNumberView } from "../../account-api/views.ts";
import { KIND_NAMES, WABA_RATE_LIMIT_PER_HOUR } from "../../numbers/condition.ts";
import type { NumberKind } from "../../store/types.ts";
import { UsageChart } from "../../html/chart.tsx";
import { ActionButton, Badge, FieldError, Notice, Time } from "../../html/components.tsx";
import { CardsTable } from "../../html/list.tsx";
import type { NumberUsage } from "../../html/usage.ts";
import type { SignupView } from "../../onboarding/signup.ts";
import { SignupPanel, UnfinishedSignups, type SignupSettings } from "./signup.tsx";

export type NumberRow = ReturnType<typeof accountNumberView>;

export interface NumbersPageProps {
  numbers: NumberRow[];
  /** Each number's proxied calls, last 24 hours and 7 days (absent: none). */
  usage: Map<string, NumberUsage>;
  now: number;
  flash?: JSX.Element;
  form?: { values: Record<string, unknown>; errors: Record<string, string>; message?: string };
  /** Embedded Signup's settings, when it is on. */
  signup?: SignupSettings;
  /** Why the last signup could not start. */
  signupMessage?: string;
  /** Signups that did not finish. */
  unfinished?: SignupView[];
}

let formatter: Intl.NumberFormat | undefined;
/** Made at the first page, not at start: a NumberFormat costs a few milliseconds of start-up. */
const grouped = (n: number) => {
  formatter ??= new Intl.NumberFormat("en-US");
  return formatter.format(n);
};

function NumberName(props: { n: NumberRow }) {
  const { n } = props;
  return (
    <>
      <strong safe>{n.display_phone_number ?? n.phone_number_id}</strong>
      {n.verified_name ? <div safe>{n.verified_name}</div> : ""}
      <div class="muted small mono">
        id <span safe>{n.phone_number_id}</span> · WABA <span safe>{n.waba_id}</span>
      </div>
    </>
  );
}

/** A number's proxied calls: the last 24 hours by hour and the last 7 days by day, with a link to them. */
function NumberCalls(props: { usage: NumberUsage | undefined; label: string; id: string }) {
  if (!props.usage) return <span class="muted small">No calls in the last 7 days</span>;
  return (
    <>
      <a class="small" href={`/dashboard/requests?number=${encodeURIComponent(props.id)}`}>
        See its requests
      </a>
      <div class="small muted">Last 24 hours</div>
      <UsageChart bars={props.usage.hours} unit="hour" label={`${props.label}, last 24 hours`} />
      <div class="small muted">Last 7 days</div>
      <UsageChart bars={props.usage.days} unit="day" label={`${props.label}, last 7 days`} />
    </>
  );
}

function NumbersTable(props: { numbers: NumberRow[]; usage: Map<string, NumberUsage>; now: number; signup: boolean }) {
  if (props.numbers.length === 0) {
    return (
      <p class="panel">
        No numbers are connected yet.{" "}
        {props.signup
          ? "Connect one with the platform, or a bring-your-own number,"
          : "Connect a bring-your-own number"}{" "}
        below, or ask your operator to connect one.
      </p>
    );
  }
  return (
    <CardsTable
      caption="Connected numbers"
      columns={["Number", "Kind", "Status", "Throughput", "Last checked", "Calls", { text: "Actions", hidden: true }]}
    >
      {props.numbers.map((n) => (
        <tr>
          <td data-label="Number">
            <NumberName n={n} />
          </td>
          <td data-label="Kind">{escapeHtml(KIND_NAMES[n.kind as NumberKind])}</td>
          <td data-label="Status">
            <Badge tone={n.usable ? "ok" : "bad"} text={n.status_text} />
            {n.action ? (
              <p class="small" safe>
                {n.action}
              </p>
            ) : (
              ""
            )}
            {n.cause ? (
              <p class="small muted" data-cause safe>
                {n.cause.text}
              </p>
            ) : (
              ""
            )}
          </td>
          <td data-label="Throughput">
            {n.kind === "coexistence" ? (
              <>
                {escapeHtml(n.throughput_level)} <span class="muted small">(coexistence caps it)</span>
              </>
            ) : (
              escapeHtml(n.throughput_level)
            )}
            <div class="small">{escapeHtml(grouped(n.rate_limit_per_second))} requests/s</div>
          </td>
          <td data-label="Last checked">
            <Time at={n.synced_at} now={props.now} />
            {n.sync_error ? (
              <p class="small error-text">
                The last check failed: <span safe>{n.sync_error}</span>
              </p>
            ) : (
              ""
            )}
          </td>
          <td data-label="Calls" class="usage">
            <NumberCalls
              usage={props.usage.get(n.phone_number_id)}
              label={n.display_phone_number ?? n.phone_number_id}
              id={n.phone_number_id}
            />
          </td>
          <td data-label="Actions">
            <ActionButton
              action={`/dashboard/numbers/${encodeURIComponent(n.phone_number_id)}/sync`}
              label="Check again"
              name={`Check again ${n.display_phone_number ?? n.phone_number_id}`}
            />
            {n.kind === "coexistence" ? (
              <a class="small" href={`/dashboard/numbers/${encodeURIComponent(n.phone_number_id)}/coexistence`}>
                Contacts and history sync
              </a>
            ) : (
              ""
            )}
          </td>
        </tr>
      ))}
    </CardsTable>
  );
}

function TextField(props: {
  name: string;
  label: string;
  hint: string;
  type?: string;
  pattern?: string;
  maxlength: number;
  form: NumbersPageProps["form"];
}) {
  const error = props.form?.errors[props.name];
  const value = props.type === "password" ? undefined : (props.form?.values[props.name] as string | undefined);
  const hintId = `${props.name}-hint`;
  const errorId = `${props.name}-error`;
  return (
    <div>
      <label for={props.name}>
        {escapeHtml(props.label)}
        <span class="hint" id={hintId}>
          {escapeHtml(props.hint)}
        </span>
      </label>
      <input
        type={props.type ?? "text"}
        id={props.name}
        name={props.name}
        required
        maxlength={String(props.maxlength)}
        pattern={props.pattern}
        value={value}
        autocomplete="off"
        spellcheck="false"
        aria-invalid={error ? "true" : undefined}
        aria-describedby={error ? `${hintId} ${errorId}` : hintId}
      />
      <FieldError id={errorId} message={error} />
    </div>
  );
}

const ID_PATTERN = "[0-9A-Za-z_\\-]+";

/** The bring-your-own form's fields; the two secrets are never sent back into the page. */
const CONNECT_FIELDS: Omit<Parameters<typeof TextField>[0], "form">[] = [
  {
    name: "waba_id",
    label: "WABA id",
    hint: "The business account id, digits only on the platform.",
    pattern: ID_PATTERN,
    maxlength: 64,
  },
  {
    name: "phone_number_id",
    label: "Phone number id",
    hint: "Not the phone number itself: its id on the platform.",
    pattern: ID_PATTERN,
    maxlength: 64,
  },
  {
    name: "access_token",
    label: "Access token",
    hint: "A system-user token of your app with messaging permission. Stored encrypted.",
    type: "password",
    maxlength: 4096,
  },
  {
    name: "app_secret",
    label: "App secret",
    hint: "Your app's secret: it signs calls upstream and checks your app's webhooks. Stored encrypted.",
    type: "password",
    maxlength: 256,
  },
];

export function NumbersPage(props: NumbersPageProps) {
  const { flash = "" } = props;
  return (
    <>
      <h1>Numbers</h1>
      <p class="lead">
        The phone numbers your API keys can send from, whether each one can be used right now, and how fast.
      </p>
      {flash}
      <NumbersTable numbers={props.numbers} usage={props.usage} now={props.now} signup={props.signup !== undefined} />
      <p class="small muted">
        Sends and media uploads count against each number's own limit (80 requests/s standard, 1,000 requests/s at the
        HIGH throughput level, 20 requests/s for coexistence numbers). Templates, media reads and profile reads share
        the WABA's budget of {escapeHtml(grouped(WABA_RATE_LIMIT_PER_HOUR))} requests/hour. Check again reads the
        throughput level and the number's state from the platform again.
      </p>

      {props.signup ? <SignupPanel settings={props.signup} message={props.signupMessage} /> : ""}
      <UnfinishedSignups signups={props.unfinished ?? []} />

      <section class="panel" aria-labelledby="connect-heading">
        <h2 id="connect-heading">Connect a bring-your-own number</h2>
        <p class="small">
          For a number in your own app on the platform. The details are checked with the platform before anything is
          saved. Connecting a number again with a new access token also reconnects a WABA whose token was revoked.
        </p>
        {props.form?.message ? (
          <Notice tone="bad">
            <p safe>{props.form.message}</p>
          </Notice>
        ) : (
          ""
        )}
        <form method="post" action="/dashboard/numbers" class="stack">
          {CONNECT_FIELDS.map((field) => (
            <TextField {...field} form={props.form} />
          ))}
          <div>
            <button type="submit">Connect number</button>
          </div>
        </form>
      </section>
    </>
  );
}
