import { Webhook } from "standardwebhooks";

export interface DemoReceiver {
  url: string;
  /** The endpoint's current signing secret; set after the endpoint is created or rotated. */
  setSecret(secret: string): void;
  stop(): Promise<void>;
}

type Change = {
  field?: string;
  value?: {
    messages?: { id?: string; text?: { body?: string } }[];
    statuses?: { id?: string; status?: string }[];
  };
};

/** What one change says: its statuses, its inbound messages, or else its field. */
function describeChange(change: Change): string[] {
  const parts: string[] = [];
  for (const s of change.value?.statuses ?? []) parts.push(`status ${s.status} for ${s.id}`);
  for (const m of change.value?.messages ?? [])
    parts.push(`inbound message ${m.id}${m.text?.body ? `: "${m.text.body}"` : ""}`);
  if (!change.value?.statuses && !change.value?.messages) parts.push(`${change.field} event`);
  return parts;
}

/** One line a person can read: which event, which message or status. */
export function describeEvent(body: string): string {
  try {
    const event = JSON.parse(body) as { proxy_test?: boolean; entry?: { changes?: Change[] }[] };
    const parts = (event.entry?.flatMap((e) => e.changes ?? []) ?? []).flatMap(describeChange);
    return `${event.proxy_test ? "[test] " : ""}${parts.join("; ") || "event"}`;
  } catch {
    return "a body that is not JSON";
  }
}

/**
 * The demo's webhook endpoint: verifies every delivery the way a real receiver should (Standard
 * Webhooks signature and timestamp, duplicates skipped by webhook-id) and prints what arrived.
 */
export function startDemoReceiver(options: { port?: number; print: (line: string) => void }): DemoReceiver {
  let verifier: Webhook | undefined;
  const seen = new Set<string>();
  const server = Bun.serve({
    port: options.port ?? 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      if (request.method !== "POST") return new Response("demo webhook receiver: POST deliveries here\n");
      const body = await request.text();
      const id = request.headers.get("webhook-id") ?? "";
      try {
        if (!verifier) throw new Error("no secret yet");
        verifier.verify(body, request.headers.toJSON());
      } catch (error) {
        options.print(`demo receiver: REJECTED ${id}: ${(error as Error).message}`);
        return new Response("invalid signature\n", { status: 401 });
      }
      if (seen.has(id)) {
        options.print(`demo receiver: duplicate ${id} skipped`);
        return new Response(null, { status: 204 });
      }
      seen.add(id);
      options.print(`demo receiver: verified ${id}: ${describeEvent(body)}`);
      return new Response(null, { status: 204 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/webhooks`,
    setSecret(secret) {
      verifier = new Webhook(secret);
    },
    async stop() {
      await server.stop(true);
    },
  };
}
