// The dashboard's only script of its own (htmx does the rest). Loaded from /dashboard/assets,
// so the Content-Security-Policy can forbid inline scripts entirely. A module: strict, and deferred.

function announce(button, text) {
  const status = document.getElementById(button.getAttribute("aria-describedby") || "");
  button.textContent = text;
  if (status) status.textContent = text;
}

// Copy buttons: <button data-copy="input-id">. The clipboard API needs a secure context; plain
// http on a LAN address falls back to selecting the text and the older copy command.
document.addEventListener("click", async (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
  if (!button) return;
  const input = document.getElementById(button.getAttribute("data-copy"));
  if (!input) return;
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    announce(button, "Copied");
  } catch {
    announce(button, document.execCommand("copy") ? "Copied" : "Press Ctrl+C to copy");
  }
});

// Forms that destroy something ask first: <form data-confirm="Delete this endpoint?">. This runs in
// the capture phase, before htmx's own submit handler, so a cancelled question stops both.
document.addEventListener(
  "submit",
  (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  },
  true,
);
