import { afterAll, beforeAll } from "bun:test";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import type { Deps } from "../../src/deps.ts";
import type { SignatureScheme } from "../../src/store/endpoints.ts";
import type { SqliteStoreOptions } from "../../src/store/sqlite/store.ts";
import { admin, startApp, TEST_APP_SECRET, testDeps, type TestDeps } from "../support/harness.ts";

/** One request a receiver got. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

export type Responder = (req: Request, body: string) => Response | Promise<Response>;

/** A webhook receiver on 127.0.0.1 that records every request; its answer can be changed. */
export function receiver(respond: Responder = () => new Response("ok")) {
  const received: Received[] = [];
  let current = respond;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = await req.text();
      const headers: Record<string, string> = {};
      req.headers.forEach((value, key) => {
        headers[key] = value;
      });
      received.push({ headers, body, at: Date.now() });
      return current(req, body);
    },
  });
  return {
    received,
    url: `http://127.0.0.1:${server.port}/hook`,
    port: server.port!,
    respond(next: Responder) {
      current = next;
    },
    stop: () => server.stop(true),
  };
}

export type Receiver = ReturnType<typeof receiver>;

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

/** POSTs an upstream event to the relay at `url`, signed with `secret` (APP_SECRET by default; null: unsigned). */
export function postUpstream(
  url: string,
  body: string | Uint8Array<ArrayBuffer>,
  secret: string | null = TEST_APP_SECRET,
) {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return fetch(`${url}/webhooks/upstream`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(secret === null ? {} : { "x-hub-signature-256": hubSignature(secret, bytes) }),
    },
    body: bytes,
  });
}

/**
 * An account on the relay at `base`, made through the operator API: a WABA (with `appSecret` as its
 * BYO app secret when given), `numbers` numbers of `kind`, and a user signed in to the dashboard
 * API, whose calls `api` makes (signing in again when a moved clock expired the session).
 */
export async function relayAccount(
  base: string,
  input: { kind?: "byo" | "embedded" | "coexistence" | "sandbox"; appSecret?: string; numbers?: number } = {},
) {
  const id = unique();
  const created = (await (
    await admin(base, "POST", "/admin/accounts", { name: `Acct ${id}`, email: `owner-${id}@example.com` })
  ).json()) as { id: string };
  const wabaId = `waba${id}`;
  await admin(base, "POST", `/admin/accounts/${created.id}/wabas`, {
    waba_id: wabaId,
    access_token: "token",
    ...(input.appSecret ? { app_secret: input.appSecret } : {}),
  });
  const numbers: string[] = [];
  for (let i = 0; i < (input.numbers ?? 1); i++) {
    const phone = `pn${id}x${i}`;
    const r = await admin(base, "POST", `/admin/accounts/${created.id}/numbers`, {
      phone_number_id: phone,
      waba_id: wabaId,
      kind: input.kind ?? "embedded",
    });
    if (r.status !== 201) throw new Error(`number: ${r.status} ${await r.text()}`);
    numbers.push(phone);
  }
  const email = `user-${id}@example.com`;
  const password = "correct horse battery";
  await admin(base, "POST", `/admin/accounts/${created.id}/users`, { email, password });
  const signIn = async () => {
    const session = await fetch(`${base}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    return session.headers.get("set-cookie")!.split(";")[0]!;
  };
  let cookie = await signIn();
  const send = (method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: { cookie, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  /** A call of the account's API: its status, headers and JSON, as the shape the caller reads (`unknown` unless it says). */
  const api = async <T = unknown>(method: string, path: string, body?: unknown) => {
    let response = await send(method, path, body);
    // Tests move the clock by hours; sessions last 12, so sign in again when one has expired.
    if (response.status === 401) {
      cookie = await signIn();
      response = await send(method, path, body);
    }
    const text = await response.text();
    return {
      status: response.status,
      body: (text ? JSON.parse(text) : null) as T,
      headers: response.headers,
    };
  };
  const endpoint = async (
    url: string,
    fields: string[] = ["messages"],
    phoneNumberId?: string | null,
    signature?: SignatureScheme,
  ) => {
    const r = await api("POST", "/api/endpoints", {
      url,
      fields,
      ...(phoneNumberId !== undefined ? { phone_number_id: phoneNumberId } : {}),
      ...(signature !== undefined ? { signature } : {}),
    });
    if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { id: string; secret: string };
  };
  /** A dashboard page's HTML as this account's user sees it. */
  const page = async (path: string) => (await send("GET", path)).text();
  /** The session cookie (`sb_session=…`) this account's calls carry, for requests `api` cannot make. */
  const sessionCookie = () => cookie;
  return { id: created.id, wabaId, numbers, api, endpoint, page, user: { email, password }, sessionCookie };
}

/**
 * A running app on a fresh database (DEV_MODE unless told otherwise, so loopback http receivers
 * are allowed), with helpers to create accounts and call the dashboard API as them.
 */
export async function relayApp(
  options: { env?: Record<string, string>; deps?: Partial<Deps>; store?: SqliteStoreOptions } = {},
) {
  const deps: TestDeps = await testDeps({
    env: { DEV_MODE: "1", WEBHOOK_VERIFY_TOKEN: "verify-me", ...options.env },
    deps: options.deps,
    store: options.store,
  });
  const server = startApp(deps);
  const relay = server.app.decorator.webhookRelay;
  const receivers: Receiver[] = [];

  return {
    deps,
    url: server.url,
    relay,
    account: (input?: Parameters<typeof relayAccount>[1]) => relayAccount(server.url, input),
    receiver(respond?: Responder) {
      const r = receiver(respond);
      receivers.push(r);
      return r;
    },
    post: (body: string | Uint8Array<ArrayBuffer>, secret?: string | null) => postUpstream(server.url, body, secret),
    /** Runs the scheduler's tick and waits until the queue is idle. */
    tick: () => relay.dispatcher.tick(),
    /** Runs the retention purges now (the server runs them once a minute). */
    purge: () => server.app.retention.run(),
    async close() {
      await server.stop();
      for (const r of receivers) r.stop();
      await deps.cleanup();
    },
  };
}

export type RelayApp = Awaited<ReturnType<typeof relayApp>>;
export type RelayAccount = Awaited<ReturnType<typeof relayAccount>>;

/** Registers hooks giving a test file one app (relayApp's options) with one account on it; read both from the result. */
export function appWithAccount(options?: Parameters<typeof relayApp>[0]): { app: RelayApp; a: RelayAccount } {
  const shared = {} as { app: RelayApp; a: RelayAccount };
  beforeAll(async () => {
    shared.app = await relayApp(options);
    shared.a = await shared.app.account();
  });
  afterAll(() => shared.app.close());
  return shared;
}

/** A `messages` change for a number. */
export function messageChange(phoneNumberId: string, text = "hi", field = "messages") {
  return {
    field,
    value: {
      messaging_product: "whatsapp",
      metadata: { display_phone_number: "15550001111", phone_number_id: phoneNumberId },
      messages: [
        { from: "15550002222", id: `wamid.${unique()}`, timestamp: "1767225600", type: "text", text: { body: text } },
      ],
    },
  };
}

export function eventBody(entries: { id: string; changes: unknown[] }[]): string {
  return JSON.stringify({ object: "whatsapp_business_account", entry: entries });
}
