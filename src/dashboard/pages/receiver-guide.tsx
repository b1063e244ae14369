import { escapeHtml } from "@kitajs/html";
const NODE_EXAMPLE = `// npm install standardwebhooks
import express from "express";
import { Webhook } from "standardwebhooks";

const wh = new Webhook(process.env.SWITCHBOARD_SECRET); // "whsec_…"
const app = express();

// Verify the raw bytes: parsing and re-serialising the JSON first breaks the signature.
app.post("/webhooks/switchboard", express.raw({ type: "application/json" }), async (req, res) => {
  let event;
  try {
    // Checks webhook-signature (any of its v1 signatures) and rejects a
    // webhook-timestamp more than 5 minutes from your clock.
    event = wh.verify(req.body, req.headers);
  } catch {
    return res.status(400).send("bad signature");
  }
  if (event.proxy_test) return res.sendStatus(204);          // Send test
  const id = req.header("webhook-id");
  if (await alreadyHandled(id)) return res.sendStatus(204);  // a retry of a delivery you processed
  await queueForProcessing(id, event);                       // answer fast; work afterwards
  res.sendStatus(204);
});`;

const PYTHON_EXAMPLE = `# pip install standardwebhooks
import os
from standardwebhooks.webhooks import Webhook

wh = Webhook(os.environ["SWITCHBOARD_SECRET"])  # "whsec_…"

def handle(raw_body: bytes, headers: dict) -> int:
    try:
        event = wh.verify(raw_body, headers)  # raises on a bad signature or stale timestamp
    except Exception:
        return 400
    if event.get("proxy_test"):
        return 204
    if already_handled(headers["webhook-id"]):
        return 204
    queue_for_processing(headers["webhook-id"], event)
    return 204`;

/** How to receive our deliveries safely (docs/webhooks.md), shown on every endpoint's page. */
export function ReceiverGuide() {
  return (
    <section class="panel" aria-labelledby="guide-heading">
      <h2 id="guide-heading">Receiver guide</h2>
      <p>
        Every delivery is an HTTPS POST of the platform's event body, unchanged, with these headers:{" "}
        <code>webhook-id</code> (the delivery id, the same on every retry), <code>webhook-timestamp</code> and{" "}
        <code>webhook-signature</code> (Standard Webhooks, HMAC-SHA256 over <code>id.timestamp.body</code>).
      </p>
      <p id="platform-scheme">
        <strong>Platform signature.</strong> An endpoint set to sign like the platform is for a bot already written
        against it: each delivery holds one change in the platform's own shape and also carries{" "}
        <code>X-Hub-Signature-256: sha256=…</code>, an HMAC-SHA256 of the exact body keyed by the signing secret, so the
        bot's library accepts it with the signing secret set as its app secret. That header has no timestamp, so a
        captured delivery verifies for ever: prefer Standard Webhooks for any receiver you can change.{" "}
        <code>docs/receivers.md</code> shows the two settings to change for each library (whatsapp-api-js, Kapso, Chat
        SDK, pywa) and what each of them does that you should know.
      </p>
      <ul>
        <li>
          <strong>
            Verify <code>webhook-signature</code>
          </strong>{" "}
          with a Standard Webhooks library and the signing secret, over the raw body. After a rotation the header
          carries two signatures for 24 hours; the libraries accept either. <code>X-Upstream-Signature-256</code> is
          only useful for bring-your-own numbers; rely on <code>webhook-signature</code>.
        </li>
        <li>
          <strong>
            Skip <code>proxy_test</code> events.
          </strong>{" "}
          Send test sends one change of the field you choose (<code>messages</code> unless you pick another) with{" "}
          <code>"proxy_test": true</code> and message ids starting <code>wamid.proxy_test.</code>; production handlers
          must not act on it. (A platform-signed endpoint gets the platform's own shape, without the top-level flag.)
        </li>
        <li>
          <strong>
            Skip duplicate <code>webhook-id</code>s.
          </strong>{" "}
          A delivery is retried with the same id when your answer was lost or slow, so remember the ids you handled. A
          replay gets a new id, so also de-duplicate on the message ids inside (<code>messages[].id</code>) where it
          matters.
        </li>
        <li>
          <strong>Answer 2xx within 10 seconds</strong> and do slow work afterwards. Other answers and time-outs are
          retried for about 20 hours (8 attempts); redirects are not followed. Answering <strong>410</strong> disables
          the endpoint at once.
        </li>
        <li>
          <strong>Check what you got.</strong> A batched event can hold changes for other fields or numbers: look at{" "}
          <code>changes[].field</code> and <code>value.metadata.phone_number_id</code>. Order is best effort.
        </li>
      </ul>
      <details>
        <summary>Node.js example</summary>
        <pre>
          <code>{escapeHtml(NODE_EXAMPLE)}</code>
        </pre>
      </details>
      <details>
        <summary>Python example</summary>
        <pre>
          <code>{escapeHtml(PYTHON_EXAMPLE)}</code>
        </pre>
      </details>
    </section>
  );
}
