/**
 * The layers of src/, bottom first. A module imports only from its own folder and from layers
 * below its own; the modules of one layer are siblings that do not know each other. A new folder
 * is refused until it has a place here. Layers are counted from 0 at the bottom.
 */
export const LAYERS: { modules: string[]; what: string }[] = [
  {
    modules: ["errors", "platform", "ip"],
    what: "the error catalog, the platform's words, IP addresses and ranges: they import nothing of ours",
  },
  { modules: ["config"], what: "the settings read from the environment" },
  { modules: ["observability"], what: "logger, metrics, tracing" },
  { modules: ["runtime"], what: "the injected primitives: clock, random, resolver, fetch, background workers" },
  { modules: ["crypto", "net"], what: "sealing secrets and the development key; the SSRF-safe client and IP rules" },
  { modules: ["store"], what: "the storage seam and both backends" },
  { modules: ["limits"], what: "rate limits over the store's token buckets" },
  { modules: ["deps.ts"], what: "the injected parts createApp is given; each capability takes a slice of them" },
  { modules: ["instances"], what: "who is alive: this instance's heartbeat, and taking back a dead one's leases" },
  { modules: ["http", "notify"], what: "the plumbing every route shares (guards, time and JSON formats); notices" },
  { modules: ["audit"], what: "the audit log's entries (who, what, before → after) and its queries" },
  { modules: ["auth", "accounts"], what: "sessions and the operator's token; accounts, their users and API keys" },
  {
    modules: ["numbers", "requests", "backup", "retention", "operators"],
    what: "WABAs and numbers; the request log and usage; backups; retention; operator users and their sessions",
  },
  { modules: ["proxy"], what: "the proxied API: its checks (key, billing, number, limits), forwarding" },
  { modules: ["webhooks"], what: "the webhook relay: ingress, endpoints, the delivery queue's dispatcher" },
  { modules: ["messages", "onboarding", "simulator"], what: "capabilities over the relay; the fake upstream" },
  { modules: ["account-api", "admin"], what: "the JSON surfaces: the account's API, the operator API" },
  {
    modules: ["html"],
    what: "the HTML kit both UIs share: layout, components, forms, lists, charts, the sign-in door, assets",
  },
  {
    modules: ["dashboard", "console"],
    what: "the HTML surfaces: the account's pages, showing what the account API answers; the operator console across accounts",
  },
  { modules: ["cli", "demo", "move"], what: "the tools beside the server" },
  { modules: ["app.ts", "system-deps.ts"], what: "the composition root: the app and the real world's parts" },
  { modules: ["start"], what: "each command's wiring: what it opens and runs, and how it fails" },
  { modules: ["main.ts"], what: "the only reader of the environment" },
];
