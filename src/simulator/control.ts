import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { rawTarget } from "../http/raw-target.ts";
import type { FaultTable } from "./faults.ts";
import { UPSTREAM_ERRORS, type UpstreamErrorCode } from "./upstream-errors.ts";
import type { SimWorld } from "./world.ts";

const id = Type.String({ minLength: 1, maxLength: 64, pattern: "^[0-9A-Za-z_-]+$" });
const wabaBody = Type.Object({
  waba_id: id,
  access_token: Type.String({ minLength: 1 }),
  app_secret: Type.String({ minLength: 1 }),
});
const numberBody = Type.Object({
  waba_id: id,
  phone_number_id: id,
  throughput_level: Type.Optional(Type.Union([Type.Literal("STANDARD"), Type.Literal("HIGH")])),
});
const errorCodes = Object.keys(UPSTREAM_ERRORS).map((code) => Type.Literal(Number(code)));
const faultBody = Type.Object({
  id: Type.String({ minLength: 1 }),
  error: Type.Optional(Type.Union(errorCodes)),
  delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
  drop: Type.Optional(Type.Literal(true)),
  times: Type.Optional(Type.Integer({ minimum: 1 })),
});
const inboundBody = Type.Object({
  phone_number_id: id,
  from: Type.Optional(Type.String({ pattern: "^\\d{6,15}$" })),
  text: Type.Optional(Type.String({ maxLength: 4096 })),
});

const json = (status: number, body?: unknown) =>
  body === undefined ? new Response(null, { status }) : Response.json(body, { status });

async function read<S extends TSchema>(request: Request, schema: S): Promise<Static<S> | Response> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return json(400, { error: "the body is not JSON" });
  }
  const first = Value.Errors(schema, body).First();
  return first ? json(400, { error: `${first.path || "body"}: ${first.message}` }) : (body as Static<S>);
}

type Control = {
  world: SimWorld;
  faults: FaultTable;
  inbound(input: { phoneNumberId: string; from?: string; text?: string }): Promise<string>;
};

async function addWaba(sim: Control, request: Request): Promise<Response> {
  const body = await read(request, wabaBody);
  if (body instanceof Response) return body;
  sim.world.addWaba({ wabaId: body.waba_id, accessToken: body.access_token, appSecret: body.app_secret });
  return json(201, { waba_id: body.waba_id });
}

async function addNumber(sim: Control, request: Request): Promise<Response> {
  const body = await read(request, numberBody);
  if (body instanceof Response) return body;
  if (!sim.world.wabas.has(body.waba_id))
    return json(404, { error: `no WABA ${body.waba_id}; POST /_sim/wabas first` });
  sim.world.addNumber(body.waba_id, { phoneNumberId: body.phone_number_id, throughputLevel: body.throughput_level });
  return json(201, { phone_number_id: body.phone_number_id });
}

async function setFault(sim: Control, request: Request): Promise<Response> {
  const body = await read(request, faultBody);
  if (body instanceof Response) return body;
  const fault =
    body.error !== undefined
      ? { error: body.error as UpstreamErrorCode }
      : body.delay_ms !== undefined
        ? { delayMs: body.delay_ms }
        : body.drop
          ? { drop: true as const }
          : null;
  if (!fault) return json(400, { error: "say one of error, delay_ms or drop" });
  sim.faults.set(body.id, fault, body.times);
  return json(204);
}

async function clearFaults(sim: Control): Promise<Response> {
  sim.faults.clear();
  return json(204);
}

async function sendInbound(sim: Control, request: Request): Promise<Response> {
  const body = await read(request, inboundBody);
  if (body instanceof Response) return body;
  if (!sim.world.numbers.has(body.phone_number_id)) return json(404, { error: `no number ${body.phone_number_id}` });
  try {
    return json(202, {
      message_id: await sim.inbound({ phoneNumberId: body.phone_number_id, from: body.from, text: body.text }),
    });
  } catch (error) {
    return json(409, { error: (error as Error).message });
  }
}

const ROUTES = new Map<string, (sim: Control, request: Request) => Promise<Response>>([
  ["POST /_sim/wabas", addWaba],
  ["POST /_sim/numbers", addNumber],
  ["POST /_sim/faults", setFault],
  ["DELETE /_sim/faults", clearFaults],
  ["POST /_sim/inbound", sendInbound],
]);

/**
 * The simulator's own control API under /_sim/ (never part of the platform's API): what a developer
 * running `switchboard simulate` uses to register WABAs and numbers, inject faults and send an
 * inbound message. Returns null for every other path.
 */
export function controlRoute(sim: Control) {
  return async (request: Request): Promise<Response | null> => {
    const { path } = rawTarget(request.url);
    if (!path.startsWith("/_sim/")) return null;
    const route = `${request.method} ${path}`;
    const handler = ROUTES.get(route);
    return handler ? handler(sim, request) : json(404, { error: `no simulator control route ${route}` });
  };
}
