import { cryptoRandom, type Random } from "../runtime/random.ts";
import { FaultTable, type Fault } from "./faults.ts";
import type { AcceptedMessage, SmbSyncType } from "./call.ts";
import type { RecordedRequest } from "./recorder.ts";
import type { Fetch } from "../runtime/fetch.ts";
import { platformNames, type PlatformNames } from "../platform/names.ts";
import { controlRoute } from "./control.ts";
import { handleCall, type SimServer } from "./serve-call.ts";
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

/** Webhooks back to Switchboard: every send in flight is tracked so tests can wait for them. */
function webhooksOut(
  hooks: SimulatorWebhooks | undefined,
  world: SimWorld,
  names: PlatformNames,
  random: Random,
  now: () => number,
) {
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
  return {
    /** Null without `webhooks`: an accepted message then sends no statuses. */
    statuses: post
      ? (message: AcceptedMessage) => {
          for (const [i, status] of STATUS_SEQUENCE.entries())
            sendLater(delay * (i + 1), () => statusEvent(world, names, message, status, Math.floor(now() / 1000)));
        }
      : null,
    async inbound(input: { phoneNumberId: string; from?: string; text?: string }): Promise<string> {
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
    },
    /** A coexistence sync's webhook, a moment after the platform accepted it. */
    syncRequested(sync: { phoneNumberId: string; syncType: SmbSyncType }): void {
      if (!post) return;
      const event = smbSyncEvent(world, names, {
        ...sync,
        messageId: newMessageId(random),
        unixSeconds: Math.floor(now() / 1000),
      });
      sendLater(delay, () => event);
    },
    async idle() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
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
  const names = options.names ?? platformNames();
  const out = webhooksOut(options.webhooks, world, names, random, options.now ?? Date.now);
  if (out.statuses) listeners.add(out.statuses);
  const { inbound } = out;
  const signup = options.signupApp ? new SignupStandIn(world, random, options.signupApp, names) : null;
  const sim: SimServer = {
    world,
    names,
    random,
    faults,
    requests,
    keepBodyBytes: options.keepBodyBytes ?? 1024 * 1024,
    requireProof: options.requireProof ?? true,
    baseUrl: "",
    signup,
    control: controlRoute({ world, faults, inbound }),
    accepted(message) {
      accepted.push(message);
      for (const listener of listeners) listener(message);
    },
    syncRequested: out.syncRequested,
  };

  const server = Bun.serve({
    port: options.port ?? 0,
    hostname: options.hostname ?? "127.0.0.1",
    maxRequestBodySize: 1024 * 1024 * 1024,
    idleTimeout: 255,
    fetch: (request) => handleCall(sim, request),
  });
  const port = server.port;
  if (port === undefined) throw new Error("the simulator's server listens on no port");
  sim.baseUrl = `http://${server.hostname}:${port}`;

  return {
    url: sim.baseUrl,
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
    webhooksIdle: () => out.idle(),
    stop: () => server.stop(true),
  };
}
