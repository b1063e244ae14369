import { escapeHtml, type Children } from "@kitajs/html";

/** The dashboard's sections, in menu order. */
export const SECTIONS = [
  { key: "endpoints", href: "/dashboard/endpoints", title: "Endpoints" },
  { key: "deliveries", href: "/dashboard/deliveries", title: "Deliveries" },
  { key: "requests", href: "/dashboard/requests", title: "Requests" },
  { key: "numbers", href: "/dashboard/numbers", title: "Numbers" },
  { key: "api-keys", href: "/dashboard/api-keys", title: "API keys" },
  { key: "settings", href: "/dashboard/settings", title: "Settings" },
  { key: "notifications", href: "/dashboard/notifications", title: "Notifications" },
  { key: "activity", href: "/dashboard/activity", title: "Activity" },
] as const;

export type SectionKey = (typeof SECTIONS)[number]["key"];

/**
 * htmx settings that keep it inside the CSP: no injected <style>, no eval, no inline scripts in
 * swapped content, requests only to ourselves, and no copies of pages (which may show a secret)
 * in localStorage.
 */
const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
});

function Document(props: { title: string; children: Children }) {
  return (
    <>
      {"<!doctype html>"}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="htmx-config" content={HTMX_CONFIG} />
          <meta name="referrer" content="same-origin" />
          <title>{escapeHtml(props.title)} · Switchboard</title>
          <link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml" />
          <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
          <script src="/dashboard/assets/htmx.min.js" defer></script>
          <script type="module" src="/dashboard/assets/dashboard.js"></script>
        </head>
        <body>{props.children}</body>
      </html>
    </>
  );
}

/** A page for a signed-in user: header with the account, the section menu, and the content. */
export function Layout(props: {
  title: string;
  section: SectionKey | null;
  accountName: string;
  userEmail: string;
  children: Children;
}) {
  return (
    <Document title={props.title}>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <div class="top-inner">
          <a class="brand" href="/dashboard">
            Switchboard
          </a>
          <span class="account">
            <span safe>{props.accountName}</span> · <span safe>{props.userEmail}</span>
          </span>
          <form method="post" action="/dashboard/sign-out">
            <button type="submit" class="button">
              Sign out
            </button>
          </form>
        </div>
      </header>
      <nav class="main" aria-label="Sections">
        <ul>
          {SECTIONS.map((s) => (
            <li>
              <a href={s.href} aria-current={s.key === props.section ? "page" : undefined}>
                {s.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="content" tabindex="-1">
        {props.children}
      </main>
    </Document>
  );
}

/** A page without the menu: sign-in, and errors shown before we know who is asking. */
export function BarePage(props: { title: string; children: Children }) {
  return (
    <Document title={props.title}>
      <main id="content" class="signin">
        {props.children}
      </main>
    </Document>
  );
}
