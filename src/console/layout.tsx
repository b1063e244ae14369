import { escapeHtml } from "@kitajs/html";
import { Notice } from "../dashboard/components.tsx";
import { htmlResponse } from "../dashboard/http.ts";
import { BarePage, Frame } from "../dashboard/layout.tsx";
import type { AppError } from "../errors/catalog.ts";
import type { Operator } from "../store/operators.ts";

/** The console's sections, in menu order. */
export const CONSOLE_SECTIONS = [
  { key: "overview", href: "/operator", title: "Overview" },
  { key: "accounts", href: "/operator/accounts", title: "Accounts" },
  { key: "numbers", href: "/operator/numbers", title: "Numbers" },
  { key: "usage", href: "/operator/usage", title: "Usage" },
  { key: "audit", href: "/operator/audit", title: "Audit log" },
  { key: "backups", href: "/operator/backups", title: "Backups" },
] as const;

export type ConsoleSection = (typeof CONSOLE_SECTIONS)[number]["key"];

/** A console page for the signed-in operator, in the dashboard's frame with the console's menu. */
export function consolePage(
  operator: Operator,
  title: string,
  section: ConsoleSection | null,
  content: JSX.Element,
): string {
  return (
    <Frame
      title={title}
      home="/operator"
      brand="Switchboard operator"
      who={<span safe>{operator.email}</span>}
      signOut="/operator/sign-out"
      sections={CONSOLE_SECTIONS}
      section={section}
      tone="operator"
    >
      {content}
    </Frame>
  ) as string;
}

/** One of our errors as a page (a fragment for htmx), in place of the API's JSON envelope. */
export function consoleErrorPage(error: AppError, operator: Operator | null, fragment: boolean): Response {
  const title = error.status === 404 ? "Not found" : error.status === 403 ? "Not allowed" : "Something went wrong";
  const message = (
    <Notice tone="bad">
      <p safe>{error.message}</p>
    </Notice>
  );
  if (fragment) return htmlResponse(message as string, error.status);
  const body = operator ? (
    consolePage(
      operator,
      title,
      null,
      <>
        <h1>{escapeHtml(title)}</h1>
        {message}
        <p>
          <a href="/operator">Back to the overview</a>
        </p>
      </>,
    )
  ) : (
    <BarePage title={title}>
      <h1>{escapeHtml(title)}</h1>
      {message}
      <p>
        <a href="/operator/sign-in">Sign in</a>
      </p>
    </BarePage>
  );
  return htmlResponse(body as string, error.status);
}
