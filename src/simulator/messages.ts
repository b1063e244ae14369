import type { Answer, CallContext } from "./call.ts";
import { upstreamErrorBody, type UpstreamErrorCode } from "./upstream-errors.ts";
import type { NumberRecord } from "./world.ts";

/**
 * POST /{phone-number-id}/messages as the platform takes it from real clients: a message of any
 * type to `to`, or a status update about a message received (mark as read, with or without a
 * typing indicator). What each type must carry follows the platform's own checks and wording;
 * anything it would accept and fail later (an unknown media id, say) is accepted here too.
 */

type Body = Record<string, unknown>;
type Check = (body: Body) => string | null;

const object = (value: unknown): Body | null =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Body) : null;
const text = (value: unknown) => typeof value === "string" && value !== "";

/** A media message's object needs an uploaded media id or a link. */
const media =
  (type: string): Check =>
  (body) => {
    const m = object(body[type]);
    return m && (text(m.id) || text(m.link))
      ? null
      : `(#100) The parameter ${type}['id'] or ${type}['link'] is required.`;
  };

/** What each message type must carry, by the platform's wording of the error when it does not. */
const TYPES: Record<string, Check> = {
  text: (b) => (text(object(b.text)?.body) ? null : "(#100) The parameter text['body'] is required."),
  image: media("image"),
  audio: media("audio"),
  video: media("video"),
  document: media("document"),
  sticker: media("sticker"),
  reaction: (b) =>
    text(object(b.reaction)?.message_id) ? null : "(#100) The parameter reaction['message_id'] is required.",
  interactive: (b) => {
    const i = object(b.interactive);
    return i && text(i.type) && object(i.action)
      ? null
      : "(#100) The parameters interactive['type'] and interactive['action'] are required.";
  },
  template: (b) => {
    const t = object(b.template);
    return t && text(t.name) && text(object(t.language)?.code)
      ? null
      : "(#100) The parameters template['name'] and template['language']['code'] are required.";
  },
  location: (b) => {
    const l = object(b.location);
    return l && l.latitude !== undefined && l.longitude !== undefined
      ? null
      : "(#100) The parameters location['latitude'] and location['longitude'] are required.";
  },
  contacts: (b) =>
    Array.isArray(b.contacts) && b.contacts.length > 0 ? null : "(#100) The parameter contacts is required.",
};

function fail(ctx: CallContext, code: UpstreamErrorCode, message: string): Answer {
  return upstreamErrorBody(code, ctx.traceId, message, ctx.names.product);
}

/** A status update: mark a received message as read, optionally showing a typing indicator. */
function markRead(ctx: CallContext, body: Body): Answer {
  if (body.status !== "read")
    return fail(ctx, 100, `(#100) Param status must be one of {READ} - got "${String(body.status)}".`);
  if (!text(body.message_id)) return fail(ctx, 100, "(#100) The parameter message_id is required.");
  const typing = body.typing_indicator;
  if (typing !== undefined && object(typing)?.type !== "text")
    return fail(ctx, 100, "(#100) Param typing_indicator['type'] must be one of {TEXT}.");
  return { status: 200, body: { success: true } };
}

/** Whether the WABA has the template the body names, in its language. */
function knownTemplate(ctx: CallContext, number: NumberRecord, body: Body): boolean {
  const t = object(body.template);
  return (
    ctx.world.templates
      .get(number.wabaId)
      ?.some((x) => x.name === t?.name && x.language === object(t?.language)?.code) ?? false
  );
}

export function postMessage(
  ctx: CallContext,
  number: NumberRecord,
  body: Body | null,
  messageId: () => string,
): Answer {
  if (!body || body.messaging_product === undefined)
    return fail(ctx, 100, "(#100) The parameter messaging_product is required.");
  if (body.messaging_product !== ctx.names.product) {
    return fail(
      ctx,
      100,
      `(#100) Param messaging_product must be one of {${ctx.names.product.toUpperCase()}} - got "${String(body.messaging_product)}".`,
    );
  }
  if (body.status !== undefined) return markRead(ctx, body);
  if (!text(body.to)) return fail(ctx, 100, "(#100) The parameter to is required.");
  const type = body.type === undefined ? "text" : String(body.type);
  const check = TYPES[type];
  if (!check)
    return fail(
      ctx,
      100,
      `(#100) Param type must be one of {${Object.keys(TYPES).join(", ").toUpperCase()}} - got "${type}".`,
    );
  const wrong = check(body);
  if (wrong) return fail(ctx, 100, wrong);
  if (type === "template" && !knownTemplate(ctx, number, body))
    return fail(ctx, 132001, "(#132001) Template name does not exist in the translation");
  const to = body.to as string;
  const id = messageId();
  ctx.accepted({ messageId: id, wabaId: number.wabaId, phoneNumberId: number.phoneNumberId, to, type });
  return {
    status: 200,
    body: {
      messaging_product: ctx.names.product,
      contacts: [{ input: to, wa_id: to.replace(/\D/g, "") }],
      messages: [type === "template" ? { id, message_status: "accepted" } : { id }],
    },
  };
}
