import { randomId, type Random } from "../runtime/random.ts";
import type { PlatformNames } from "../platform/names.ts";
import { checkCredentials } from "./auth.ts";
import type { AcceptedMessage, Answer, SmbSyncType } from "./call.ts";
import type { Fault, FaultTable } from "./faults.ts";
import { answer } from "./handlers.ts";
import { recordRequest, type RecordedRequest } from "./recorder.ts";
import type { SignupStandIn } from "./signup.ts";
import { upstreamErrorBody } from "./upstream-errors.ts";
import type { SimWorld } from "./world.ts";

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

/** What the simulator's server answers from: its world, faults and records, and where accepted messages go. */
export interface SimServer {
  world: SimWorld;
  names: PlatformNames;
  random: Random;
  faults: FaultTable;
  requests: RecordedRequest[];
  keepBodyBytes: number;
  requireProof: boolean;
  /** Set once the server listens. */
  baseUrl: string;
  signup: SignupStandIn | null;
  control: (request: Request) => Promise<Response | null>;
  accepted(message: AcceptedMessage): void;
  syncRequested(sync: { phoneNumberId: string; syncType: SmbSyncType }): void;
}

/** An answer as the platform sends it, with its headers. */
const respond = (names: PlatformNames, traceId: string, a: Answer, wabaId?: string) =>
  new Response(JSON.stringify(a.body), { status: a.status, headers: platformHeaders(names, traceId, wabaId) });

/** `/{version}/{id}[/{edge}]` read; null for any other path. */
function pathOf(path: string): { id: string; edge: string | null } | null {
  const [empty, version, id, edge, ...rest] = path.split("/");
  if (empty !== "" || !version || !/^v\d+\.0$/.test(version) || !id || rest.length > 0) return null;
  return { id, edge: edge ?? null };
}

/** Embedded Signup's code exchange, or the error a fault put in its place. */
function exchange(
  signup: SignupStandIn,
  names: PlatformNames,
  applied: Fault[],
  params: URLSearchParams,
  traceId: string,
) {
  const refused = applied.find((f) => "error" in f);
  return refused && "error" in refused
    ? upstreamErrorBody(refused.error, traceId, refused.message, names.product)
    : signup.exchange(params);
}

/** The answer a fault puts in place of the real one (a canned reply, or an error); null when none does. */
function faultAnswer(names: PlatformNames, applied: Fault[], traceId: string, wabaId: string | undefined) {
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
    return respond(names, traceId, upstreamErrorBody(error.error, traceId, error.message, names.product), wabaId);
  return null;
}

/** One request to the simulator: its control API and signup stand-in first, then the platform's API. */
export async function handleCall(sim: SimServer, request: Request): Promise<Response> {
  const { names } = sim;
  const controlled = (await sim.signup?.route(request, sim.baseUrl)) ?? (await sim.control(request));
  if (controlled) return controlled;
  const recorded = await recordRequest(request, sim.keepBodyBytes);
  sim.requests.push(recorded);
  const params = new URLSearchParams(recorded.query);
  const traceId = randomId(sim.random, "A", 22).slice(2);
  const target = pathOf(recorded.path);
  if (!target)
    return respond(names, traceId, upstreamErrorBody(100, traceId, "Unknown path components", names.product));
  const { id, edge } = target;
  const applied = sim.faults.take([id, params.get("phone_number_id"), `${recorded.method} ${id}`]);
  for (const f of applied) if ("delayMs" in f) await Bun.sleep(f.delayMs);
  if (applied.some((f) => "drop" in f)) return dropped();
  if (id === "oauth" && edge === "access_token" && sim.signup)
    return respond(names, traceId, exchange(sim.signup, names, applied, params, traceId));

  const auth = checkCredentials(sim.world, recorded.headers.authorization, params, id, sim.requireProof);
  if (!auth.ok) return respond(names, traceId, upstreamErrorBody(auth.code, traceId, auth.message, names.product));
  const wabaId = auth.waba?.wabaId;
  const faulted = faultAnswer(names, applied, traceId, wabaId);
  if (faulted) return faulted;
  if (!auth.waba) return respond(names, traceId, upstreamErrorBody(100, traceId, undefined, names.product), undefined);

  const result = await answer({
    world: sim.world,
    names,
    random: sim.random,
    request: recorded,
    params,
    id,
    edge,
    baseUrl: sim.baseUrl,
    traceId,
    accepted: (message) => sim.accepted(message),
    syncRequested: (sync) => sim.syncRequested(sync),
  });
  return respond(names, traceId, result, wabaId);
}
