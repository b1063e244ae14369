import type { PlatformNames } from "../platform/names.ts";
import { SMB_SYNC_TYPES, type Answer, type CallContext } from "./call.ts";
import { postMessage } from "./messages.ts";
import { upstreamErrorBody, type UpstreamErrorCode } from "./upstream-errors.ts";
import { newMessageId, type NumberRecord, numericId } from "./world.ts";

const ok = (body: unknown): Answer => ({ status: 200, body });
const fail = (ctx: CallContext, code: UpstreamErrorCode, message?: string): Answer =>
  upstreamErrorBody(code, ctx.traceId, message, ctx.names.product);
const missing = (ctx: CallContext): Answer =>
  fail(
    ctx,
    100,
    `Unsupported ${ctx.request.method.toLowerCase()} request. Object with ID '${ctx.id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
  );

function json(ctx: CallContext): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(ctx.request.body));
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function sendMessage(ctx: CallContext): Answer {
  const number = ctx.world.numbers.get(ctx.id);
  if (!number) return missing(ctx);
  return postMessage(ctx, number, json(ctx), () => newMessageId(ctx.random));
}

/** PUT /{number}/messages marks an inbound message as read (or shows a typing indicator). */
function updateMessage(ctx: CallContext): Answer {
  if (!ctx.world.numbers.has(ctx.id)) return missing(ctx);
  const body = json(ctx);
  if (!body || typeof body.message_id !== "string")
    return fail(ctx, 100, "(#100) The parameter message_id is required.");
  return ok({ success: true });
}

async function uploadMedia(ctx: CallContext): Promise<Answer> {
  if (!ctx.world.numbers.has(ctx.id)) return missing(ctx);
  const { request } = ctx;
  let mimeType = "application/octet-stream";
  let sha256 = request.bodySha256;
  let fileSize = request.bodyLength;
  // Small uploads are parsed as the platform would (size and hash of the file itself); large ones
  // were only hashed while they streamed, form and all.
  if (request.body.byteLength === request.bodyLength) {
    try {
      const form = await new Response(request.body, {
        headers: { "content-type": request.headers["content-type"] ?? "" },
      }).formData();
      const file = form.get("file");
      if (!(file instanceof Blob)) return fail(ctx, 100, "(#100) The parameter file is required.");
      const type = form.get("type");
      mimeType = typeof type === "string" && type !== "" ? type : file.type || mimeType;
      fileSize = file.size;
      sha256 = new Bun.CryptoHasher("sha256").update(await file.arrayBuffer()).digest("hex");
    } catch {
      return fail(ctx, 100, "(#100) The request must be multipart/form-data.");
    }
  }
  const id = numericId(ctx.random);
  ctx.world.media.set(id, { id, phoneNumberId: ctx.id, mimeType, sha256, fileSize });
  return ok({ id });
}

function mediaObject(ctx: CallContext): Answer {
  const media = ctx.world.media.get(ctx.id);
  if (!media || media.phoneNumberId !== ctx.params.get("phone_number_id")) return missing(ctx);
  if (ctx.request.method === "DELETE") {
    ctx.world.media.delete(ctx.id);
    return ok({ success: true });
  }
  return ok({
    messaging_product: ctx.names.product,
    url: `${ctx.baseUrl}/media-download/${media.id}`,
    mime_type: media.mimeType,
    sha256: media.sha256,
    file_size: media.fileSize,
    id: media.id,
  });
}

function readNumber(ctx: CallContext, n: NumberRecord): Answer {
  const all: Record<string, unknown> = {
    verified_name: n.verifiedName,
    display_phone_number: n.displayPhoneNumber,
    quality_rating: n.qualityRating,
    code_verification_status: "VERIFIED",
    platform_type: "CLOUD_API",
    throughput: { level: n.throughputLevel },
  };
  const fields = ctx.params.get("fields");
  const chosen = fields
    ? Object.fromEntries(
        fields
          .split(",")
          .filter((f) => f in all)
          .map((f) => [f, all[f]]),
      )
    : all;
  return ok({ ...chosen, id: n.phoneNumberId });
}

function businessProfile(ctx: CallContext): Answer {
  if (!ctx.world.numbers.has(ctx.id)) return missing(ctx);
  return ok({
    data: [
      {
        about: "Simulated business",
        address: "1 Example Street",
        description: "A business that exists only in the simulator.",
        email: "hello@example.com",
        messaging_product: ctx.names.product,
        vertical: "OTHER",
        websites: ["https://example.com/"],
      },
    ],
  });
}

function templates(ctx: CallContext): Answer {
  const list = ctx.world.templates.get(ctx.id);
  if (!list || !ctx.world.wabas.has(ctx.id)) return missing(ctx);
  if (ctx.request.method === "GET") {
    return ok({ data: list, paging: { cursors: { before: "QVFIUmFk", after: "QVFIUmFk" } } });
  }
  if (ctx.request.method === "DELETE") {
    const name = ctx.params.get("name");
    const left = list.filter((t) => t.name !== name);
    if (!name || left.length === list.length)
      return fail(ctx, 100, `(#100) Message template "${name ?? ""}" not found.`);
    ctx.world.templates.set(ctx.id, left);
    return ok({ success: true });
  }
  const body = json(ctx);
  if (
    !body ||
    typeof body.name !== "string" ||
    typeof body.category !== "string" ||
    typeof body.language !== "string"
  ) {
    return fail(ctx, 100, "(#100) The parameters name, category and language are required.");
  }
  const template = {
    id: numericId(ctx.random),
    name: body.name,
    language: body.language,
    category: body.category,
    status: "PENDING",
    components: Array.isArray(body.components) ? body.components : [],
  };
  list.push(template);
  return ok({ id: template.id, status: template.status, category: template.category });
}

function subscribeApp(ctx: CallContext): Answer {
  if (!ctx.world.wabas.has(ctx.id)) return missing(ctx);
  ctx.world.subscribed.add(ctx.id);
  return ok({ success: true });
}

function registerNumber(ctx: CallContext): Answer {
  if (!ctx.world.numbers.has(ctx.id)) return missing(ctx);
  const body = json(ctx);
  if (!body || body.messaging_product !== ctx.names.product)
    return fail(ctx, 100, "(#100) The parameter messaging_product is required.");
  if (typeof body.pin !== "string" || !/^\d{6}$/.test(body.pin))
    return fail(ctx, 100, "(#100) Param pin must be a 6-digit number.");
  const before = ctx.world.registered.get(ctx.id);
  // A number with two-step verification on keeps its PIN: registering again needs the same one.
  if (before !== undefined && before !== body.pin)
    return fail(ctx, 100, "(#133005) Two step verification PIN Mismatch.");
  ctx.world.registered.set(ctx.id, body.pin);
  return ok({ success: true });
}

/** POST /{number}/smb_app_data: starts a coexistence sync, once per type; its webhooks follow. */
function smbAppData(ctx: CallContext): Answer {
  if (!ctx.world.numbers.has(ctx.id)) return missing(ctx);
  const body = json(ctx);
  const syncType = SMB_SYNC_TYPES.find((t) => t === body?.sync_type);
  if (!body || body.messaging_product !== ctx.names.product || !syncType) {
    return fail(ctx, 100, `(#100) Param sync_type must be one of {${SMB_SYNC_TYPES.join(", ")}}.`);
  }
  const key = `${ctx.id}:${syncType}`;
  if (ctx.world.smbSyncs.has(key))
    return fail(ctx, 100, `(#100) The ${syncType} sync was already requested for this phone number.`);
  ctx.world.smbSyncs.add(key);
  ctx.syncRequested({ phoneNumberId: ctx.id, syncType });
  return ok({ messaging_product: ctx.names.product, request_id: numericId(ctx.random) });
}

type Handler = (ctx: CallContext) => Answer | Promise<Answer>;

/** The calls of docs/proxy.md#the-allow-list, as the platform answers them. `null` edge = the object itself. */
const calls = (names: PlatformNames): { method: string; edge: string | null; handler: Handler }[] => [
  { method: "POST", edge: "messages", handler: sendMessage },
  { method: "PUT", edge: "messages", handler: updateMessage },
  { method: "POST", edge: "media", handler: uploadMedia },
  { method: "GET", edge: "message_templates", handler: templates },
  { method: "POST", edge: "message_templates", handler: templates },
  { method: "DELETE", edge: "message_templates", handler: templates },
  { method: "GET", edge: names.businessProfileEdge, handler: businessProfile },
  {
    method: "GET",
    edge: null,
    handler: (ctx) => {
      const number = ctx.world.numbers.get(ctx.id);
      return number ? readNumber(ctx, number) : mediaObject(ctx);
    },
  },
  { method: "DELETE", edge: null, handler: mediaObject },
  // The service's own calls (Embedded Signup, coexistence syncs), not forwarded for customers.
  { method: "POST", edge: "subscribed_apps", handler: subscribeApp },
  { method: "POST", edge: "register", handler: registerNumber },
  { method: "POST", edge: "smb_app_data", handler: smbAppData },
];

export function answer(ctx: CallContext): Answer | Promise<Answer> {
  const call = calls(ctx.names).find((c) => c.method === ctx.request.method && c.edge === ctx.edge);
  return call ? call.handler(ctx) : missing(ctx);
}
