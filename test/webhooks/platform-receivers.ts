import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@kapso/whatsapp-cloud-api/server";
import { createWhatsAppAdapter } from "@chat-adapter/whatsapp";
import { WhatsAppAPI } from "whatsapp-api-js/middleware/node-http";

/**
 * The published receivers of issue 37, each as a bot written against the platform uses it, on
 * its own HTTP server: only its app secret (and verify token) is set, to the endpoint's. What
 * each one answered and read is recorded.
 */
export interface BotReceiver {
  name: string;
  url: string;
  /** The app secret (and verify token) the bot owner pasted in. */
  configure(appSecret: string, verifyToken?: string): void;
  /** Status codes answered to POSTs, in order. */
  answers: number[];
  /** Texts of the messages the library handed to the bot's code (whatsapp-api-js only). */
  texts: string[];
  /** Raw requests as they arrived. */
  requests: { headers: Record<string, string | string[] | undefined>; body: Buffer }[];
  stop(): Promise<void>;
}

type Request0 = IncomingMessage & { url: string; method: string };
type Handler = (
  req: Request0,
  config: { secret: string; token: string },
  body: () => Promise<Buffer>,
) => Promise<{ status: number; body?: string }>;

async function serve(name: string, handler: Handler, extra?: Partial<BotReceiver>): Promise<BotReceiver> {
  const config = { secret: "", token: "" };
  const bot: BotReceiver = {
    name,
    url: "",
    configure(secret, token = "no-verify-token-set") {
      config.secret = secret;
      config.token = token;
    },
    answers: [],
    texts: [],
    requests: [],
    stop: () => new Promise((resolve) => server.close(() => resolve())),
    ...extra,
  };
  const server: Server = createServer(async (req, res) => {
    const post = req.method === "POST";
    const record = { headers: req.headers, body: Buffer.alloc(0) };
    if (post) bot.requests.push(record);
    const readBody = async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      record.body = Buffer.concat(chunks);
      return record.body;
    };
    const out = await handler(req as Request0, config, readBody).catch((): { status: number; body?: string } => ({
      status: 500,
    }));
    if (post) bot.answers.push(out.status);
    res.statusCode = out.status;
    res.end(out.body ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  bot.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
  return bot;
}

/** A Request for libraries that take the web standard one, from what node:http received. */
async function webRequest(req: Request0, body: () => Promise<Buffer>): Promise<Request> {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
  return new Request(`http://127.0.0.1${req.url}`, {
    method: req.method,
    headers,
    body: req.method === "POST" ? new Uint8Array(await body()) : undefined,
  });
}

/** whatsapp-api-js through its own node:http middleware (handle_post / handle_get), given the request as is. */
export function whatsappApiJs(): Promise<BotReceiver> {
  const texts: string[] = [];
  return serve(
    "whatsapp-api-js",
    async (req, config) => {
      const api = new WhatsAppAPI({
        v: "v24.0",
        token: "unused",
        appSecret: config.secret,
        webhookVerifyToken: config.token,
      });
      api.on.message = ({ message }) => {
        if (message.type === "text") texts.push(message.text.body);
      };
      if (req.method === "GET") {
        try {
          return { status: 200, body: api.handle_get(req) };
        } catch (code) {
          return { status: code as number };
        }
      }
      return { status: await api.handle_post(req) };
    },
    { texts },
  );
}

/** @kapso/whatsapp-cloud-api's verifySignature over the raw bytes. */
export function kapso(): Promise<BotReceiver> {
  return serve("kapso", async (req, config, body) => {
    const header = req.headers["x-hub-signature-256"];
    const ok = verifySignature({
      appSecret: config.secret,
      rawBody: await body(),
      signatureHeader: typeof header === "string" ? header : undefined,
    });
    return { status: ok ? 200 : 401 };
  });
}

/** A logger that says nothing (the adapter warns of every message it has no Chat instance for). */
const quiet = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

/** @chat-adapter/whatsapp's handleWebhook (POST and the GET challenge). */
export function chatSdk(): Promise<BotReceiver> {
  return serve("chat-adapter", async (req, config, body) => {
    const adapter = createWhatsAppAdapter({
      accessToken: "unused",
      appSecret: config.secret,
      phoneNumberId: "unused",
      verifyToken: config.token,
      logger: quiet,
    });
    const response = await adapter.handleWebhook(await webRequest(req, body));
    return { status: response.status, body: await response.text() };
  });
}

/**
 * pywa's rule, written out (it is Python): `sha256=` optional, lowercase hex of HMAC-SHA256 over
 * the raw body, hmac.compare_digest; no header is 422 (FastAPI).
 */
export function pywaStrict(): Promise<BotReceiver> {
  return serve("pywa", async (req, config, body) => {
    if (req.method === "GET") {
      const q = new URL(req.url, "http://x").searchParams;
      const ok = q.get("hub.mode") === "subscribe" && q.get("hub.verify_token") === config.token;
      return ok ? { status: 200, body: q.get("hub.challenge") ?? "" } : { status: 403 };
    }
    const header = req.headers["x-hub-signature-256"];
    if (typeof header !== "string") return { status: 422 };
    const given = Buffer.from(header.replace(/^sha256=/, ""));
    const expected = Buffer.from(
      createHmac("sha256", config.secret)
        .update(await body())
        .digest("hex"),
    );
    return { status: given.length === expected.length && timingSafeEqual(given, expected) ? 200 : 401 };
  });
}

export const ALL_RECEIVERS = [whatsappApiJs, kapso, chatSdk, pywaStrict];
