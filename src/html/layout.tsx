import { escapeHtml, type Children } from "@kitajs/html";

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

/** A section of a menu: where it goes and what it is called. */
export interface NavItem {
  key: string;
  href: string;
  title: string;
}

/**
 * A page for someone signed in (an account's user on the dashboard, an operator on the console):
 * header with who they are and a sign-out button, the section menu, and the content.
 */
export function Frame(props: {
  title: string;
  /** Where the brand links to, and what it says. */
  home: string;
  brand: string;
  /** Who is signed in, as the header shows it. */
  who: Children;
  signOut: string;
  sections: readonly NavItem[];
  section: string | null;
  /** A class on the header, to tell the console from the dashboard at a glance. */
  tone?: string;
  children: Children;
}) {
  return (
    <Document title={props.title}>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class={props.tone ? `top ${props.tone}` : "top"}>
        <div class="top-inner">
          <a class="brand" href={props.home}>
            {escapeHtml(props.brand)}
          </a>
          <span class="account">{props.who}</span>
          <form method="post" action={props.signOut}>
            <button type="submit" class="button">
              Sign out
            </button>
          </form>
        </div>
      </header>
      <nav class={props.tone ? `main ${props.tone}` : "main"} aria-label="Sections">
        <ul>
          {props.sections.map((s) => (
            <li>
              <a href={s.href} aria-current={s.key === props.section ? "page" : undefined}>
                {escapeHtml(s.title)}
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
