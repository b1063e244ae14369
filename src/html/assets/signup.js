// Embedded Signup on the Numbers page: loads the platform's SDK, opens its signup popup, and posts
// the page's form with the authorization code and the ids the popup reported. A file of its own
// (not inline) so the Content-Security-Policy keeps forbidding inline scripts. A module: strict, and deferred.

/** The platform's signup message from its popup, parsed; null for any other message. */
function signupEvent(event, origins) {
  if (!origins.includes(event.origin)) return null;
  let data = event.data;
  if (typeof data === "string") {
    try {
      data = JSON.parse(data);
    } catch {
      return null;
    }
  }
  if (!data || typeof data.type !== "string" || !data.type.endsWith("_EMBEDDED_SIGNUP")) return null;
  return data;
}

/** Loads the platform's SDK; the button works once it has. */
function loadSdk(panel, button, say) {
  const sdk = document.createElement("script");
  sdk.src = panel.getAttribute("data-sdk-url");
  sdk.async = true;
  sdk.onload = () => {
    window.FB.init({
      appId: panel.getAttribute("data-app-id"),
      autoLogAppEvents: false,
      xfbml: false,
      version: panel.getAttribute("data-version"),
    });
    button.disabled = false;
    say("");
  };
  sdk.onerror = () => say("The platform's signup could not be loaded. Check the connection and reload the page.");
  document.head.appendChild(sdk);
}

/** What the popup is opened with: the signup's configuration, asking for coexistence when chosen. */
function loginOptions(panel, coexistence) {
  return {
    config_id: panel.getAttribute("data-config-id"),
    response_type: "code",
    override_default_response_type: true,
    extras: {
      setup: {},
      featureType: coexistence ? panel.getAttribute("data-coexistence-feature") : "",
      sessionInfoVersion: "3",
    },
  };
}

function signup(panel) {
  const form = panel.querySelector("form");
  const button = panel.querySelector("[data-signup-start]");
  const status = panel.querySelector("[data-signup-status]");
  const origins = (panel.getAttribute("data-origins") || "").split(" ");
  let session = null;
  let code = null;
  const say = (text) => {
    status.textContent = text;
  };

  // Both halves are needed: the popup's session information (which WABA and number) and the code.
  function finish() {
    if (!session || !code) return;
    form.elements.code.value = code;
    form.elements.waba_id.value = session.wabaId;
    form.elements.phone_number_id.value = session.phoneNumberId;
    form.elements.coexistence.value = session.coexistence ? "true" : "";
    say("Connecting the number…");
    form.submit();
  }

  window.addEventListener("message", (event) => {
    const data = signupEvent(event, origins);
    if (!data) return;
    const info = data.data || {};
    if (typeof data.event === "string" && data.event.startsWith("FINISH") && info.waba_id && info.phone_number_id) {
      session = {
        wabaId: String(info.waba_id),
        phoneNumberId: String(info.phone_number_id),
        coexistence: /BUSINESS_APP_ONBOARDING$/.test(data.event),
      };
      finish();
    } else if (data.event === "CANCEL") {
      say(`Signup was cancelled${info.current_step ? ` at “${info.current_step}”` : ""}. Nothing was saved.`);
      button.disabled = false;
    } else if (data.event === "ERROR") {
      say(`The platform reported an error: ${info.error_message || "no details"}. Nothing was saved.`);
      button.disabled = false;
    }
  });

  loadSdk(panel, button, say);

  button.addEventListener("click", () => {
    const coexistence = form.elements.mode.value === "coexistence";
    const pin = form.elements.pin;
    // The code expires within minutes: ask for the PIN before the popup, not after.
    if (!coexistence && !/^[0-9]{6}$/.test(pin.value)) {
      say("Choose a 6-digit PIN first.");
      pin.focus();
      return;
    }
    session = null;
    code = null;
    button.disabled = true;
    say("Finish the signup in the platform's window…");
    window.FB.login(
      (response) => {
        if (response?.authResponse?.code) {
          code = response.authResponse.code;
          finish();
        } else if (!session) {
          button.disabled = false;
          say("The signup window closed before it finished. Nothing was saved.");
        }
      },
      loginOptions(panel, coexistence),
    );
  });
}

const panel = document.querySelector("[data-signup]");
if (panel) signup(panel);
