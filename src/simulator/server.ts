import { randomId, cryptoRandom, type Random } from "../runtime/random.ts";
import { checkCredentials } from "./auth.ts";
import { FaultTable, type Fault } from "./faults.ts";
import type { AcceptedMessage, Answer, SmbSyncType } from "./call.ts";
import { answer } from "./handlers.ts";
import { recordRequest, type RecordedRequest } from "./recorder.ts";
import { upstreamErrorBody } from "./upstream-errors.ts";
import type { Fetch } from "../runtime/fetch.ts";
import { platformNames, type PlatformNames } from "../platform/names.ts";
import { controlRoute } from "./control.ts";
import {
  inboundEvent,
  smbSyncEvent,
  STATUS_SEQUENCE,
  statusEvent,
  webhookSender,
  type WebhookSenderOptions,
} from "./webhooks.ts";
import { SignupStandIn, type SignedUp, type SignupApp } from "./signup.ts";
import { newMessageId, SimWorld, type SimNumber, type SimWaba, type ThroughputLevel } from "./world.ts";

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  hostname?: string;
  wabas?: SimWaba[];
  /** Refuse calls without `appsecret_proof` (default true, as apps that require it do). */
  requireProof?: boolean;
  /** Body bytes kept per recorded request (default 1 MiB); longer bodies are hashed and counted. */
  keepBodyBytes?: number;
  random?: Random;
  onMessageAccepted?: (message: AcceptedMessage) => void;
  /** Send the platform's webhooks to Switchboard's ingress: statuses after each accepted send, inbound messages on request. */
  webhooks?: SimulatorWebhooks;
  /** Epoch ms for webhook timestamps (default Date.now). */
  now?: () => number;
  /** The platform's words to speak (PLATFORM_NAME; the neutral ones by default). */
  names?: PlatformNames;
  /** The service's app: enables the Embedded Signup stand-in (SDK, popup, code exchange). */
  signupApp?: SignupApp;
}

export interface SimulatorWebhooks {
  url: string;
  /** Gap between an accepted send and its `sent` status, and between later statuses (default 250 ms). */
  statusDelayMs?: number;
  /** How a status is put off; tests pass one that runs at once. Default setTimeout. */
  schedule?: (ms: number, run: () => void) => void;
  onResult?: WebhookSenderOptions["onResult"];
  fetch?: Fetch;
}

export interface Simulator {
  readonly url: string;
  readonly port: number;
  /** Every request received, in order of arrival. */
  readonly requests: RecordedRequest[];
  /** Every message accepted by POST /{number}/messages. */
  readonly accepted: AcceptedMessage[];
  readonly world: SimWorld;
  addWaba(waba: SimWaba): void;
  addNumber(wabaId: string, number: SimNumber): void;
  setThroughput(phoneNumberId: string, level: ThroughputLevel): void;
  /** Applies `fault` to requests about `id` (path id or phone_number_id, or "GET 123" for one method only; "*" = all), `times` times or until cleared. */
  fault(id: string, fault: Fault, times?: number): void;
  clearFaults(id?: string): void;
  /** Calls `listener` after each accepted message; returns a function that unsubscribes. */
  onMessageAccepted(listener: (message: AcceptedMessage) => void): () => void;
  /** Sends an inbound text message webhook for a number (needs `webhooks`); resolves to its message id. */
  inbound(input: { phoneNumberId: string; from?: string; text?: string }): Promise<string>;
  /** The signup popup's work without a browser: a new WABA and number, and a code for their token (needs `signupApp`). */
  signUp(input?: Parameters<SignupStandIn["signUp"]>[0]): SignedUp;
  /** Resolves once every webhook scheduled or sent so far has been answered. */
  webhooksIdle(): Promise<void>;
  stop(): Promise<void>;
}

/** Headers the platform sends with every answer; the last three are ones a proxy must not pass on. */
function platformHeaders(names: PlatformNames, traceId: string, wabaId: string | undefined): Record<string, string> {
  const usage = { call_count: 1, total_cputime: 1, total_time: 1 };
  return {
    "content-type": "application/json; charset=UTF-8",
    "x-upstream-trace-id": traceId,
    "x-upstream-rev": "1019283746",
    "x-app-usage": JSON.stringify(usage),
    ...(wabaId
      ? {
          "x-business-use-case-usage": JSON.stringify({
            [wabaId]: [{ type: names.businessManagement, ...usage, estimated_time_to_regain_access: 0 }],
          }),
        }
      : {}),
    "x-upstream-debug": "simulated-debug-token",
    "cache-control": "private, no-cache, no-store, must-revalidate",
    "access-control-allow-origin": "*",
  };
}

/** A stream that fails at once with no reason: Bun then closes the connection silently, before any status line. */
const dropped = () => new Response(new ReadableStream({ pull: (c) => c.error(undefined) }));

function inTwoChunks(body: string | Uint8Array): ReadableStream<Uint8Array> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const half = Math.floor(bytes.length / 2);
  const parts = [bytes.slice(0, half), bytes.slice(half)];
  return new ReadableStream({
    // The pause makes Bun send the first chunk before the body is known, hence without a length.
    async pull(controller) {
      const part = parts.shift();
      if (!part) return controller.close();
      if (parts.length === 0) await Bun.sleep(5);
      controller.enqueue(part);
    },
  });
}

/**
 * A local stand-in for the upstream platform's HTTP API (docs/proxy.md#the-allow-list): realistic answers, the
 * platform's credential checks, trace and usage headers, and faults on demand. It records every
 * request so tests can see exactly what Switchboard sent.
 */
export function startSimulator(options: SimulatorOptions = {}): Simulator {
  const random = options.random ?? cryptoRandom;
  const world = new SimWorld();
  for (const waba of options.wabas ?? []) world.addWaba(waba);
  const faults = new FaultTable();
  const requests: RecordedRequest[] = [];
  const accepted: AcceptedMessage[] = [];
  const listeners = new Set<(message: AcceptedMessage) => void>();
  if (options.onMessageAccepted) listeners.add(options.onMessageAccepted);
  const requireProof = options.requireProof ?? true;
  const keepBodyBytes = options.keepBodyBytes ?? 1024 * 1024;
  const now = options.now ?? Date.now;
  const names = options.names ?? platformNames();
  let baseUrl = "";

  // Webhooks back to Switchboard: every send in flight is tracked so tests can wait for them.
  const hooks = options.webhooks;
  const post = hooks ? webhookSender({ url: hooks.url, world, fetch: hooks.fetch, onResult: hooks.onResult }) : null;
  const inFlight = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  const schedule = hooks?.schedule ?? ((ms, run) => void setTimeout(run, ms));
  const delay = hooks?.statusDelayMs ?? 250;
  /** Posts an event `ms` from now; counted from the moment it is scheduled, so webhooksIdle() also waits for it. */
  const sendLater = (ms: number, event: () => { wabaId: string; body: string }) => {
    if (!post) return;
    let release!: () => void;
    track(new Promise<void>((resolve) => (release = resolve)));
    schedule(ms, () => {
      const sending = post(event());
      track(sending);
      void sending.finally(release);
    });
  };
  if (post) {
    listeners.add((message) => {
      for (const [i, status] of STATUS_SEQUENCE.entries())
        sendLater(delay * (i + 1), () => statusEvent(world, names, message, status, Math.floor(now() / 1000)));
    });
  }

  async function inbound(input: { phoneNumberId: string; from?: string; text?: string }): Promise<string> {
    if (!post) throw new Error("simulator: start it with `webhooks` to send inbound messages");
    const messageId = newMessageId(random);
    const sending = post(
      inboundEvent(world, names, {
        phoneNumberId: input.phoneNumberId,
        from: input.from ?? "15550001234",
        text: input.text ?? "Hello from a simulated customer",
        messageId,
        unixSeconds: Math.floor(now() / 1000),
      }),
    );
    track(sending);
    await sending;
    return messageId;
  }

  const control = controlRoute({ world, faults, inbound });
  const signup = options.signupApp ? new SignupStandIn(world, random, options.signupApp, names) : null;

  /** A coexistence sync's webhook, a moment after the platform accepted it. */
  function syncRequested(sync: { phoneNumberId: string; syncType: SmbSyncType }): void {
    if (!post) return;
    const event = smbSyncEvent(world, names, {
      ...sync,
      messageId: newMessageId(random),
      unixSeconds: Math.floor(now() / 1000),
    });
    sendLater(delay, () => event);
  }

  async function handle(request: Request): Promise<Response> {
    const controlled = (await signup?.route(request, baseUrl)) ?? (await control(request));
    if (controlled) return controlled;
    const recorded = await recordRequest(request, keepBodyBytes);
    requests.push(recorded);
    const params = new URLSearchParams(recorded.query);
    const traceId = randomId(random, "A", 22).slice(2);
    const [empty, version, id, edge, ...rest] = recorded.path.split("/");
    const respond = (a: Answer, wabaId?: string) =>
      new Response(JSON.stringify(a.body), { status: a.status, headers: platformHeaders(names, traceId, wabaId) });
    if (empty !== "" || !version || !/^v\d+\.0$/.test(version) || !id || rest.length > 0) {
      return respond(upstreamErrorBody(100, traceId, "Unknown path components", names.product));
    }
    const applied = faults.take([id, params.get("phone_number_id"), `${recorded.method} ${id}`]);
    for (const f of applied) if ("delayMs" in f) await Bun.sleep(f.delayMs);
    if (applied.some((f) => "drop" in f)) return dropped();
    if (id === "oauth" && edge === "access_token" && signup) {
      const refused = applied.find((f) => "error" in f);
      return respond(
        refused && "error" in refused
          ? upstreamErrorBody(refused.error, traceId, refused.message, names.product)
          : signup.exchange(params),
      );
    }

    const auth = checkCredentials(world, recorded.headers.authorization, params, id, requireProof);
    if (!auth.ok) return respond(upstreamErrorBody(auth.code, traceId, auth.message, names.product));
    const wabaId = auth.waba?.wabaId;
    const canned = applied.find((f) => "reply" in f);
    if (canned && "reply" in canned) {
      const { status, body, headers, chunked } = canned.reply;
      return new Response(chunked ? inTwoChunks(body) : body, {
        status,
        headers: { ...platformHeaders(names, traceId, wabaId), ...headers },
      });
    }
    const error = applied.find((f) => "error" in f);
    if (error && "error" in error)
      return respond(upstreamErrorBody(error.error, traceId, error.message, names.product), wabaId);
    if (!auth.waba) return respond(upstreamErrorBody(100, traceId, undefined, names.product), undefined);

    const result = await answer({
      world,
      names,
      random,
      request: recorded,
      params,
      id,
      edge: edge ?? null,
      baseUrl,
      traceId,
      accepted(message) {
        accepted.push(message);
        for (const listener of listeners) listener(message);
      },
      syncRequested,
    });
    return respond(result, wabaId);
  }

  const server = Bun.serve({
    port: options.port ?? 0,
    hostname: options.hostname ?? "127.0.0.1",
    maxRequestBodySize: 1024 * 1024 * 1024,
    idleTimeout: 255,
    fetch: handle,
  });
  const port = server.port;
  if (port === undefined) throw new Error("the simulator's server listens on no port");
  baseUrl = `http://${server.hostname}:${port}`;

  return {
    url: baseUrl,
    port,
    requests,
    accepted,
    world,
    addWaba: (waba) => world.addWaba(waba),
    addNumber: (wabaId, number) => world.addNumber(wabaId, number),
    setThroughput(phoneNumberId, level) {
      const number = world.numbers.get(phoneNumberId);
      if (!number) throw new Error(`simulator: no number ${phoneNumberId}`);
      number.throughputLevel = level;
    },
    fault: (id, fault, times) => faults.set(id, fault, times),
    clearFaults: (id) => faults.clear(id),
    onMessageAccepted(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    inbound,
    signUp(input) {
      if (!signup) throw new Error("simulator: start it with `signupApp` to sign businesses up");
      return signup.signUp(input);
    },
    async webhooksIdle() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    stop: () => server.stop(true),
  };
}
