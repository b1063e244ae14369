import { networkInterfaces } from "node:os";
import { Elysia } from "elysia";
import type { Config } from "../config/config.ts";
import { canonicalAddresses } from "../net/address-policy.ts";
import { urlChecker, type UrlRules } from "../net/url-rules.ts";
import { createNotifier } from "../notify/notifier.ts";
import type { Deps } from "../deps.ts";
import type { DeliveryQueue } from "../store/queue.ts";
import { Dispatcher } from "./dispatcher.ts";
import { eventCounter } from "./event-counts.ts";
import { ingressRoutes, webhookApiRoutes } from "./routes.ts";
import type { VerifyDeps } from "./verify.ts";

export interface RelayOptions {
  /** Loopback receivers allowed; by default only in DEV_MODE (docs/operations.md#configuration). */
  allowLoopback?: boolean;
  /** An extra CA the delivery client trusts (tests); certificate verification is never turned off. */
  ca?: string;
}

/** What pages beside the relay (the dashboard's, onboarding's) need of it: its URL rules and its queue (the dispatcher). */
export interface RelayHandle {
  urlRules: UrlRules;
  dispatcher: Pick<DeliveryQueue, "enqueue">;
  /** How requests to receivers are made (deliveries, Verify). */
  client: VerifyDeps["client"];
}

/** Every address of this machine's interfaces, and the listen address when it is a specific one. */
function ownAddresses(config: Config): string[] {
  const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
  if (config.host !== "0.0.0.0" && config.host !== "::") addresses.push(config.host);
  return addresses;
}

/**
 * The webhook relay (docs/webhooks.md): ingress, the dashboard's webhook API, and the delivery queue worker.
 * `dispatcher` is exposed (also as the `webhookRelay` decorator) so tests can drive its tick, and
 * `events` (the counts of accepted events, whose worker the app runs) so they can flush it.
 */
export function webhookRelay(deps: Deps, options: RelayOptions = {}) {
  const urlRules: UrlRules = {
    allowHttp: deps.config.devMode,
    policy: {
      allowLoopback: options.allowLoopback ?? deps.config.devMode,
      // The service's own addresses are never targets (docs/webhooks.md#url-rules).
      selfAddresses: canonicalAddresses(ownAddresses(deps.config)),
    },
  };
  const notifier = createNotifier(deps);
  const client = { resolver: deps.resolver, fetch: deps.fetch, urls: urlChecker(urlRules), ca: options.ca };
  const dispatcher = new Dispatcher({ ...deps, notifier, client });
  // Counted per upstream event accepted, for the operator's overview.
  const events = eventCounter(deps);
  const relay = { dispatcher, urlRules, events, client };
  const routes = new Elysia()
    .decorate("webhookRelay", relay)
    .use(ingressRoutes(deps, dispatcher, events))
    .use(webhookApiRoutes(deps, { ...deps, urlRules, queue: dispatcher, client }));
  return { ...relay, routes };
}
