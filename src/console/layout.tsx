import { errorPage } from "../html/error-page.tsx";
import { Frame } from "../html/layout.tsx";
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

/** One of our errors as a page (a fragment for htmx): in the console's frame, or bare before sign-in. */
export function consoleErrorPage(error: AppError, operator: Operator | null, fragment: boolean): Response {
  return errorPage(error, fragment, {
    frame: operator ? (title, content) => consolePage(operator, title, null, content) : null,
    back: { href: "/operator", text: "Back to the overview" },
    signIn: "/operator/sign-in",
  });
}
