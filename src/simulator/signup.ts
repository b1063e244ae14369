import { escapeHtml } from "@kitajs/html";
import { constantTimeEqual } from "../crypto/constant-time.ts";
import { rawTarget } from "../http/raw-target.ts";
import type { PlatformNames } from "../platform/names.ts";
import { randomId, type Random } from "../runtime/random.ts";
import { numericId, type SimWorld } from "./world.ts";

/**
 * The simulator's stand-in for Embedded Signup (issue 20): the platform's JavaScript SDK (only
 * `FB.init` and `FB.login`, as the dashboard uses them), its signup popup, which creates the
 * business's WABA and number and reports them to the opener as the real popup does, and the
 * authorization codes that `GET /{version}/oauth/access_token` exchanges once each.
 */
export interface SignupApp {
  /** The service's app id (EMBEDDED_SIGNUP_APP_ID). */
  id: string;
  /** The service's app secret (APP_SECRET): it exchanges codes, and signs the new WABAs' webhooks. */
  secret: string;
}

export interface SignedUp {
  code: string;
  wabaId: string;
  phoneNumberId: string;
  coexistence: boolean;
}

interface Code {
  wabaId: string;
  used: boolean;
}

export class SignupStandIn {
  private readonly codes = new Map<string, Code>();

  constructor(
    private readonly world: SimWorld,
    private readonly random: Random,
    private readonly app: SignupApp,
    private readonly names: PlatformNames,
  ) {}

  /** What the popup does when the business finishes: its WABA (with a token of its own) and number, and a code for the token. */
  signUp(
    input: {
      wabaId?: string;
      phoneNumberId?: string;
      displayPhoneNumber?: string;
      verifiedName?: string;
      coexistence?: boolean;
    } = {},
  ): SignedUp {
    const wabaId = input.wabaId || numericId(this.random);
    const phoneNumberId = input.phoneNumberId || numericId(this.random);
    // Each signup gives the business a new token, as the platform does; an existing WABA's old one stops working.
    const accessToken = `EAAG${randomId(this.random, "t", 32).slice(2)}`;
    const existing = this.world.wabas.get(wabaId);
    if (existing) existing.accessToken = accessToken;
    else this.world.addWaba({ wabaId, accessToken, appSecret: this.app.secret });
    if (!this.world.numbers.has(phoneNumberId)) {
      this.world.addNumber(wabaId, {
        phoneNumberId,
        displayPhoneNumber: input.displayPhoneNumber || undefined,
        verifiedName: input.verifiedName || undefined,
      });
    }
    const code = `AQ${randomId(this.random, "c", 40).slice(2)}`;
    this.codes.set(code, { wabaId, used: false });
    return { code, wabaId, phoneNumberId, coexistence: input.coexistence ?? false };
  }

  /** `GET /{version}/oauth/access_token?client_id&client_secret&code`: the business's token, once per code. */
  exchange(params: URLSearchParams): { status: number; body: unknown } {
    const oauthError = (message: string, subcode?: number) => ({
      status: 400,
      body: { error: { message, type: "OAuthException", code: 100, ...(subcode ? { error_subcode: subcode } : {}) } },
    });
    if (params.get("client_id") !== this.app.id)
      return oauthError("Error validating application. Invalid application ID.");
    if (!constantTimeEqual(params.get("client_secret") ?? "", this.app.secret))
      return oauthError("Error validating client secret.");
    const code = this.codes.get(params.get("code") ?? "");
    if (!code) return oauthError("Invalid verification code format.", 36007);
    if (code.used) return oauthError("This authorization code has been used.", 36009);
    const waba = this.world.wabas.get(code.wabaId);
    if (!waba) return oauthError("Invalid verification code format.", 36007);
    code.used = true;
    return { status: 200, body: { access_token: waba.accessToken, token_type: "bearer" } };
  }

  /** Serves the SDK and the popup under /_sim/signup/; null for every other path. */
  async route(request: Request, baseUrl: string): Promise<Response | null> {
    const { path } = rawTarget(request.url);
    if (path === "/_sim/signup/sdk.js") {
      return new Response(sdkScript(baseUrl), {
        headers: { "content-type": "text/javascript; charset=utf-8", "access-control-allow-origin": "*" },
      });
    }
    if (path !== "/_sim/signup/dialog") return null;
    const query = new URL(request.url).searchParams;
    const coexistence = (query.get("feature_type") ?? "").endsWith("business_app_onboarding");
    if (query.get("app_id") !== this.app.id || !query.get("config_id")) {
      return page(
        "Signup cannot start",
        `<p>The app id or configuration id is not the one this platform knows (app ${escapeHtml(query.get("app_id") ?? "none")}).</p>`,
      );
    }
    if (request.method === "GET") return page("Connect your business", dialogForm(this.random, coexistence));
    const form = await request.formData();
    const prefix = this.names.product.toUpperCase();
    const type = `${prefix}_EMBEDDED_SIGNUP`;
    if (form.get("action") === "cancel") {
      return page(
        "Cancelled",
        finishScript([{ type, event: "CANCEL", data: { current_step: "PHONE_NUMBER_SETUP" }, version: "3" }], null),
      );
    }
    const field = (name: string) => String(form.get(name) ?? "").trim();
    const done = this.signUp({
      wabaId: field("waba_id"),
      phoneNumberId: field("phone_number_id"),
      displayPhoneNumber: field("display_phone_number"),
      verifiedName: field("verified_name"),
      coexistence,
    });
    const event = coexistence ? `FINISH_${prefix}_BUSINESS_APP_ONBOARDING` : "FINISH";
    return page(
      "Done",
      finishScript(
        [{ type, event, data: { phone_number_id: done.phoneNumberId, waba_id: done.wabaId }, version: "3" }],
        done.code,
      ),
    );
  }
}

function page(title: string, body: string): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} (simulated platform)</title></head>
<body style="font-family: sans-serif; max-width: 32rem; margin: 2rem auto"><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
}

function dialogForm(random: Random, coexistence: boolean): string {
  const input = (name: string, label: string, value: string) =>
    `<p><label for="${name}">${label}</label><br><input id="${name}" name="${name}" value="${escapeHtml(value)}"></p>`;
  return `<p>This is the simulator's stand-in for the platform's signup window.${coexistence ? " The number stays on the business app (coexistence)." : ""}</p>
<form method="post">
${input("verified_name", "Business name", "Simulated Business")}
${input("waba_id", "WABA id", numericId(random))}
${input("phone_number_id", "Phone number id", numericId(random))}
${input("display_phone_number", "Phone number", "+1 555 0199")}
<button type="submit" name="action" value="finish">Finish</button>
<button type="submit" name="action" value="cancel">Cancel</button>
</form>`;
}

/** What the real popup does at the end: the session information to the opener, then the code to the SDK. */
function finishScript(messages: unknown[], code: string | null): string {
  const posts = messages.map((m) => `window.opener.postMessage(${JSON.stringify(JSON.stringify(m))}, "*");`).join("\n");
  return `<p>You can close this window.</p><script>
if (window.opener) {
${posts}
window.opener.postMessage({ sdk: "login", code: ${JSON.stringify(code)} }, "*");
}
window.close();
</script>`;
}

/** `FB.init` and `FB.login` of the platform's SDK, opening the stand-in popup. */
function sdkScript(baseUrl: string): string {
  return `(function () {
  var SIM = ${JSON.stringify(baseUrl)};
  var app = {};
  window.FB = {
    init: function (options) { app = options || {}; },
    login: function (callback, params) {
      params = params || {};
      var extras = params.extras || {};
      var url = SIM + "/_sim/signup/dialog?app_id=" + encodeURIComponent(app.appId || "") + "&config_id=" + encodeURIComponent(params.config_id || "")
        + "&feature_type=" + encodeURIComponent(extras.featureType || "");
      var popup = window.open(url, "signup", "width=600,height=720");
      var answered = false;
      function answer(code) {
        if (answered) return;
        answered = true;
        window.removeEventListener("message", onMessage);
        clearInterval(watch);
        callback(code ? { status: "connected", authResponse: { code: code } } : { status: "unknown", authResponse: null });
      }
      function onMessage(event) {
        if (event.origin === SIM && event.data && event.data.sdk === "login") answer(event.data.code);
      }
      // Closed without finishing: the SDK calls back with no code, as the real one does.
      var watch = setInterval(function () {
        if (!popup || popup.closed) setTimeout(function () { answer(null); }, 300);
      }, 500);
      window.addEventListener("message", onMessage);
    }
  };
})();
`;
}
