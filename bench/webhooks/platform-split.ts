// Issue 37: what splitting one change per delivery and signing X-Hub-Signature-256 costs beside
// the standard scheme, for the same events, in the same run: parse, fan out (split, escape) and
// sign every delivery, in process (no HTTP, no store). `bun bench/webhooks/platform-split.ts`
import { cryptoRandom } from "../../src/runtime/random.ts";
import type { EndpointTarget } from "../../src/store/endpoints.ts";
import { parseEvent } from "../../src/webhooks/event.ts";
import { fanOut } from "../../src/webhooks/fan-out.ts";
import { hubSignature } from "../../src/webhooks/hub-signature.ts";
import { signatureHeader } from "../../src/webhooks/signing.ts";

const EVENTS = Number(process.env.EVENTS ?? 20_000);
const SECRET = `whsec_${Buffer.alloc(32, 3).toString("base64")}`;
const change = (i: number, text: string) => ({
  field: "messages",
  value: {
    messaging_product: "whatsapp",
    metadata: { display_phone_number: "15550001111", phone_number_id: "pn1" },
    contacts: [{ profile: { name: "Zoë" }, wa_id: "15550002222" }],
    messages: [{ from: "15550002222", id: `wamid.${i}`, timestamp: "1767225600", type: "text", text: { body: text } }],
  },
});
const bodies = Array.from({ length: EVENTS }, (_, i) =>
  new TextEncoder().encode(
    JSON.stringify({
      object: "whatsapp_business_account",
      entry: [{ id: "waba1", changes: [change(i, "héllo 👋"), change(i + 1, "plain text"), change(i + 2, "ça va")] }],
    }),
  ),
);

function run(signature: EndpointTarget["signature"]): { seconds: number; deliveries: number } {
  const targets: EndpointTarget[] = [{ id: "ep1", fields: ["messages"], phoneNumberId: null, signature }];
  let deliveries = 0;
  const started = performance.now();
  for (const bytes of bodies) {
    const parsed = parseEvent(bytes);
    if (!parsed.ok) throw new Error(parsed.reason);
    const share = {
      accountId: "acc",
      at: 0,
      event: parsed.event,
      entries: parsed.event.entries,
      body: bytes,
      upstreamSignature: null,
      isTest: false,
    };
    const out = fanOut(cryptoRandom, share, targets, () => true);
    const bodyOf = new Map(out.events.map((e) => [e.id, e.body]));
    for (const d of out.deliveries) {
      const body = bodyOf.get(d.eventId)!;
      signatureHeader([SECRET], d.id, 1767225600, body);
      if (signature === "platform") hubSignature(SECRET, body);
      deliveries++;
    }
  }
  return { seconds: (performance.now() - started) / 1000, deliveries };
}

run("standard");
run("platform"); // warm-up
const rows = [];
for (let round = 0; round < 3; round++) for (const s of ["standard", "platform"] as const) rows.push({ s, ...run(s) });
for (const s of ["standard", "platform"] as const) {
  const mine = rows.filter((r) => r.s === s);
  const seconds = mine.reduce((n, r) => n + r.seconds, 0);
  const deliveries = mine.reduce((n, r) => n + r.deliveries, 0);
  const events = EVENTS * mine.length;
  console.log(
    `${s}: ${Math.round(events / seconds)} events/s, ${Math.round(deliveries / seconds)} deliveries/s, ${((seconds / events) * 1e6).toFixed(1)} µs per event`,
  );
}
console.log(`load average: ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
