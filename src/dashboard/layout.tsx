import type { Children } from "@kitajs/html";
import { Frame } from "../html/layout.tsx";

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

/** A page for a signed-in user: header with the account, the section menu, and the content. */
export function Layout(props: {
  title: string;
  section: SectionKey | null;
  accountName: string;
  userEmail: string;
  children: Children;
}) {
  return (
    <Frame
      title={props.title}
      home="/dashboard"
      brand="Switchboard"
      who={
        <>
          <span safe>{props.accountName}</span> · <span safe>{props.userEmail}</span>
        </>
      }
      signOut="/dashboard/sign-out"
      sections={SECTIONS}
      section={props.section}
    >
      {props.children}
    </Frame>
  );
}
