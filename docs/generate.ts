#!/usr/bin/env bun
/**
 * Writes the tables of docs/ that the code owns, between their markers:
 *   bun docs/generate.ts          rewrite the files
 *   bun docs/generate.ts --check  exit 1, naming the files, when a committed file differs
 * test/docs/generated.test.ts fails in the same case. Prose stays hand-written around the tables.
 */
import { Counter, Gauge, Histogram } from "prom-client";
import { SETTINGS, type Setting } from "../src/config/settings.ts";
import { FIELD_GUIDE } from "../src/dashboard/field-guide.ts";
import { ERRORS, type ErrorName } from "../src/errors/catalog.ts";
import { LIMITS } from "../src/limits/policy.ts";
import { BLOCKED_IPV4, BLOCKED_IPV6 } from "../src/net/address-policy.ts";
import { createMetrics } from "../src/observability/metrics.ts";
import { platformNames } from "../src/platform/names.ts";
import { RETENTION_POLICIES, type Window } from "../src/retention/policies.ts";
import { allowList, MEDIA_SCOPE_PARAM, type Route } from "../src/proxy/allow-list.ts";
import { EVENT_FIELDS } from "../src/webhooks/fields.ts";
import { LAYERS } from "../test/architecture/layers.ts";

/** When each error of the catalog is raised: typed over every name, so a new error needs its line here. */
const WHEN: Record<ErrorName, string> = {
  invalid_api_key:
    "No `Authorization: Bearer …` header, or a key that is not a well-formed `px_live_`/`px_test_` key, is unknown or was revoked (step 2).",
  test_key_on_live_number:
    "A `px_test_` key used for a number that is not a sandbox number, or for a WABA that has any number that is not one (step 5).",
  no_subscription: "The account's billing state is `none` (step 3).",
  payment_overdue: "The account's billing state is `overdue` (step 3).",
  account_suspended: "The account's billing state is `suspended` (step 3).",
  unknown_route:
    "No allow-list row fits the method, path and id, the id is not on the caller's account (another account's id answers the same), or a media call lacks one `phone_number_id` (steps 1 and 4). Also any path outside `/admin`, `/api` and `/dashboard` that nothing serves.",
  payload_too_large:
    "`Content-Length` declares more than 100 MiB (step 7), or a body sent without one passes 100 MiB while it streams upstream, which cuts the upstream request off.",
  waba_token_revoked:
    "The WABA's token is marked revoked: upstream answered error 190, or an operator set the state. Stops every number of the WABA (step 6).",
  waba_disconnected: "The WABA is disconnected (step 6).",
  number_disconnected: "The number is disconnected (step 6).",
  number_restricted: "Upstream answered error 131031 to a call at the number, or an operator set the state (step 6).",
  number_flagged: "Upstream answered error 368 to a call at the number, or an operator set the state (step 6).",
  number_not_registered:
    "Upstream answered error 133010 to a call at the number, or an operator set the state (step 6).",
  rate_limited:
    "The bucket that pays for the call is empty (step 8); the same message for a number's and a WABA's bucket. `Retry-After` is set.",
  upstream_unreachable:
    "Upstream could not be reached (refused, reset, DNS or TLS failure), the caller's body broke off, or the proxy itself failed unexpectedly.",
  upstream_timeout: "Upstream sent no response headers within the row's time-out (step 9).",
  unauthorized:
    "Operator API without the right `ADMIN_TOKEN`; dashboard API without a live session; a wrong email or password at sign-in.",
  forbidden:
    "A state-changing dashboard or console call whose `Origin` is not the service's own host, or that has no `Origin` and is marked `Sec-Fetch-Site: cross-site` or `same-site`.",
  not_found:
    "An id that does not exist or belongs to another account (the same answer), an unknown `/admin` or `/api` path, or the operator API while `ADMIN_TOKEN` is unset.",
  invalid_request:
    "A body, query or flag that does not fit its schema (the message names the field), or an id that does not fit the call, such as a WABA of another account; outside the proxy, a request whose `Host` is missing or is no host.",
  conflict:
    "The record exists already: a dashboard user's email, a WABA or number connected before, a signup that is running elsewhere.",
  plan_limit: "Connecting a number would pass the account's `max_numbers` (disconnected numbers do not count).",
  preflight_required:
    "A coexistence sync started before any endpoint answered its pre-flight with 2xx, and without `override`.",
  sync_unavailable: "A coexistence sync that was started before, or asked for more than 24 hours after onboarding.",
  no_numbers: "Adding a webhook endpoint while the account has no connected number that is not a sandbox number.",
  invalid_url: "A webhook URL that breaks a URL rule; the message says which.",
  invalid_fields:
    "Fewer than 1 or more than 40 event fields, or a name that is not an event field (the message lists them).",
  invalid_credentials: "Connecting a bring-your-own number whose token and app secret upstream does not accept.",
  invalid_signature:
    "An event posted to `/webhooks/upstream` whose `X-Hub-Signature-256` matches no secret it could be signed with; nothing is kept.",
  verify_token_mismatch:
    "The subscription handshake with a wrong or missing `hub.verify_token` or `hub.mode`, or with `WEBHOOK_VERIFY_TOKEN` unset.",
  invalid_event:
    "A correctly signed event that is not `{object, entry: [{id, changes: [{field, value}]}]}` JSON; nothing is kept.",
  body_too_large: "A body over 1 MB declared to `/admin`, `/api` or `/dashboard`; refused before it is read.",
  length_required: "A body without `Content-Length` (chunked) sent to `/admin`, `/api` or `/dashboard`.",
  event_too_large: "An event over 10 MB posted to `/webhooks/upstream`.",
  payload_expired: "Replaying a delivery whose payload has been deleted: a `history` payload, once its delivery ended.",
  too_many_attempts:
    "A sign-in (`POST /api/session`, `POST /operator/session`, their forms, a password change's current password) from a client address that had 5 wrong passwords for its email within 15 minutes, or 20 for any emails in its current 15-minute window, whatever the password; `Retry-After` says when (see [sign-in throttling](operations.md#sign-in-throttling)).",
  too_many_signups:
    "Starting an Embedded Signup while the account already has `EMBEDDED_SIGNUP_MAX_UNFINISHED` signups neither finished nor expired.",
  number_not_readable:
    "An Embedded Signup whose code, once exchanged, gives a token the platform refuses to show the number to (another business's number): nothing is held; connect again as the number's business.",
  signup_rate_limited:
    "More Embedded Signup starts and retries from one account than `EMBEDDED_SIGNUP_STARTS_PER_HOUR` allows; `Retry-After` says when the next one may start.",
  body_timeout:
    "A request body that had not fully arrived `REQUEST_BODY_TIMEOUT_MS` after its headers: outside the proxy, or a proxied body read before it is forwarded (nothing was sent upstream); the connection is closed.",
  unsupported_media_type:
    "A state-changing `/api` call whose body is not `application/json` (what a cross-site HTML form could send).",
  body_not_expected: "A GET or HEAD that declares a body; the connection is closed.",
  backup_running: "Asking for a backup while one is being taken (scheduled, by the API or by `switchboard backup`).",
  backup_unsupported: "The backup API of a PostgreSQL deployment: back PostgreSQL up with its own tools.",
  backup_location_refused:
    "Backups listed, downloaded or taken where `BACKUP_TO` is a symbolic link: name the directory it points to.",
  backup_failed:
    "A backup that could not be taken or stored, or did not verify; nothing counts as a backup and the older ones are kept.",
  internal: "An unexpected error outside the proxy; the log has it under the request id.",
  unavailable: "The database could not be reached (scale-out mode); nothing was stored.",
};

const cell = (text: string | number) => String(text).replaceAll("|", "\\|");

function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.map(cell).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

const ID_RULE: Record<Route["id"], string> = {
  number: "a number of the caller's account",
  waba: "a WABA of the caller's account",
  media: `a media id; \`${MEDIA_SCOPE_PARAM}\` (required, once) names a number of the caller's account`,
};
const ID_NAME: Record<Route["id"], string> = { number: "{phone_number_id}", waba: "{waba_id}", media: "{media_id}" };

function allowListTable(): string {
  const rows = allowList(platformNames()).map((r) => {
    const path = `/{version}/${ID_NAME[r.id]}${r.edge ? `/${r.edge}` : ""}${r.id === "media" ? `?${MEDIA_SCOPE_PARAM}=…` : ""}`;
    const bucket = r.bucket === "number" ? "the number's" : "the WABA's";
    const timeout = r.timeout === "media" ? "media (120 s)" : "default (30 s)";
    return [r.method, `\`${path}\``, ID_RULE[r.id], bucket, timeout];
  });
  return table(["Method", "Path", "The id must be", "Bucket", "Time-out"], rows);
}

function bucketTable(): string {
  const per = (windowMs: number) => (windowMs === 1000 ? "second" : windowMs === 3_600_000 ? "hour" : `${windowMs} ms`);
  const row = (name: string, spec: { capacity: number; windowMs: number }) => [
    name,
    spec.capacity.toLocaleString("en"),
    `per ${per(spec.windowMs)}`,
    `${Number((spec.windowMs / spec.capacity).toFixed(2))} ms`,
  ];
  return table(
    ["Bucket", "Capacity (requests)", "Refilled", "One token every"],
    [
      row("a number, standard throughput", LIMITS.numberStandard),
      row("a number whose synced `throughput.level` is `HIGH`", LIMITS.numberHigh),
      row("a coexistence number, whatever its level", LIMITS.numberCoexistence),
      row("a WABA", LIMITS.waba),
    ],
  );
}

function errorTable(numeric: boolean): string {
  const rows = (Object.entries(ERRORS) as [ErrorName, (typeof ERRORS)[ErrorName]][])
    .filter(([, e]) => (typeof e.code === "number") === numeric)
    .map(([name, e]) => [`\`${e.code}\``, e.status, `\`${e.type}\``, e.message, WHEN[name]]);
  return table(["`code`", "HTTP", "`type`", "`message` (default)", "When"], rows);
}

function fieldTable(): string {
  return table(
    ["Field", "Carries"],
    EVENT_FIELDS.map((f) => {
      const guide = FIELD_GUIDE[f];
      return [`\`${f}\``, `${guide?.coexistenceOnly ? "Coexistence numbers only. " : ""}${guide?.carries ?? ""}`];
    }),
  );
}

function blockedTable(): string {
  const list = (ranges: readonly string[]) => ranges.map((r) => `\`${r}\``).join(", ");
  return table(
    ["Family", "Blocked ranges"],
    [
      ["IPv4", list(BLOCKED_IPV4)],
      [
        "IPv6",
        `${list(BLOCKED_IPV6)} (\`fec0::/10\` is site-local; \`64:ff9b:1::/48\`, NAT64 for local use, \`2001::/32\`, Teredo, and \`2002::/16\`, 6to4, are blocked whole, whatever IPv4 address they carry); an IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible or NAT64's well-known prefix) is checked as that IPv4 address`,
      ],
    ],
  );
}

/** What a table needs of one of our metrics (prom-client keeps these on the metric, untyped). */
type Described = { name: string; help: string; labelNames: string[] };

function metricsTable(): string {
  const rows = Object.values(createMetrics()).flatMap((m): (string | number)[][] => {
    const type =
      m instanceof Counter ? "counter" : m instanceof Gauge ? "gauge" : m instanceof Histogram ? "histogram" : null;
    if (type === null) return [];
    const { name, help, labelNames } = m as unknown as Described;
    return [[`\`${name}\``, type, labelNames.map((l) => `\`${l}\``).join(", ") || "–", help]];
  });
  return table(["Metric", "Type", "Labels", "What it counts"], rows);
}

/** How long a window keeps, in words. */
function kept(window: Window): string {
  if (window === "account") return "the account's retention: 24 hours, or 7 days once set";
  if (window === "expiry") return "until it expires";
  if (window === "AUDIT_RETENTION")
    return `\`AUDIT_RETENTION\`: ${SETTINGS.AUDIT_RETENTION.fallback} by default; an account's entries but the operator's: its retention, when shorter`;
  const [n, unit] = window % 86_400_000 === 0 ? [window / 86_400_000, "day"] : [window / 3_600_000, "hour"];
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

/** One row per retention policy of src/retention/policies.ts, in the order a run takes them. */
function retentionTable(): string {
  return table(
    ["Policy", "What it deletes", "Kept", "Rows per batch"],
    RETENTION_POLICIES.map((p) => [`\`${p.name}\``, p.deletes, kept(p.window), p.batch.toLocaleString("en")]),
  );
}

/** The configuration reference, one row per setting of src/config/settings.ts. */
function settingsTable(): string {
  const rows = (Object.entries(SETTINGS) as [string, Setting<unknown>][]).map(([name, s]) => {
    const shown = s.shown ?? (s.fallback === null ? "none" : `\`${s.fallback}\``);
    return [`\`${name}\``, shown, s.meaning];
  });
  return table(["variable", "default", "meaning"], rows);
}

/** The layers of src/ as test/architecture/layers.ts declares them, top first, as a reader meets them. */
function layerTable(): string {
  const rows = LAYERS.map((layer, i) => [i, layer.modules.map((m) => `\`${m}\``).join(", "), layer.what]).reverse();
  return table(["Layer", "Modules", "What they hold"], rows);
}

/** Each generated table: the file it lives in (relative to docs/), and its text. */
export const SECTIONS: Record<string, { file: string; render(): string }> = {
  "allow-list": { file: "proxy.md", render: allowListTable },
  buckets: { file: "proxy.md", render: bucketTable },
  "proxy-errors": { file: "errors.md", render: () => errorTable(true) },
  "api-errors": { file: "errors.md", render: () => errorTable(false) },
  "event-fields": { file: "webhooks.md", render: fieldTable },
  "blocked-ranges": { file: "webhooks.md", render: blockedTable },
  metrics: { file: "operations.md", render: metricsTable },
  retention: { file: "operations.md", render: retentionTable },
  settings: { file: "configuration.md", render: settingsTable },
  layers: { file: "architecture.md", render: layerTable },
};

const begin = (name: string) => `<!-- BEGIN GENERATED ${name}: bun docs/generate.ts -->`;
const end = (name: string) => `<!-- END GENERATED ${name} -->`;

/** `text` with every generated section of `file` rewritten; throws when a marker is missing. */
export function regenerate(file: string, text: string): string {
  let out = text;
  for (const [name, section] of Object.entries(SECTIONS)) {
    if (section.file !== file) continue;
    const from = out.indexOf(begin(name));
    const to = out.indexOf(end(name));
    if (from < 0 || to < from) throw new Error(`docs/${file}: the markers of "${name}" are missing`);
    out = `${out.slice(0, from)}${begin(name)}\n${section.render()}\n${out.slice(to)}`;
  }
  return out;
}

export const GENERATED_FILES = [...new Set(Object.values(SECTIONS).map((s) => s.file))];

if (import.meta.main) {
  const check = process.argv.includes("--check");
  const stale: string[] = [];
  for (const file of GENERATED_FILES) {
    const path = new URL(file, import.meta.url);
    const text = await Bun.file(path).text();
    const fresh = regenerate(file, text);
    if (fresh === text) continue;
    stale.push(`docs/${file}`);
    if (!check) await Bun.write(path, fresh);
  }
  if (check && stale.length > 0) {
    console.error(`out of date: ${stale.join(", ")} (run bun docs/generate.ts)`);
    process.exit(1);
  }
  console.log(stale.length === 0 ? "docs: up to date" : `docs: rewrote ${stale.join(", ")}`);
}
