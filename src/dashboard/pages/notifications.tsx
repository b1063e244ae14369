import type { Notification } from "../../store/types.ts";
import { Badge, Time } from "../../html/components.tsx";

export function NotificationsPage(props: { notifications: Notification[]; now: number; accountEmail: string }) {
  return (
    <>
      <h1>Notifications</h1>
      <p class="lead">
        Warnings and notices about your endpoints, also emailed to <span safe>{props.accountEmail}</span> when the
        service can send email.
      </p>
      {props.notifications.length === 0 ? (
        <p class="panel">
          Nothing yet. You are told here when an endpoint keeps failing (after 20 failures in a row) or is disabled.
        </p>
      ) : (
        props.notifications.map((n) => (
          <article class="panel" aria-labelledby={`n-${n.id}`}>
            <div class="row spread">
              <h2 id={`n-${n.id}`} safe>
                {n.subject}
              </h2>
              {n.emailedAt === null ? <Badge tone="plain" text="Not emailed" /> : <Badge tone="ok" text="Emailed" />}
            </div>
            <p class="small muted">
              <Time at={n.createdAt} now={props.now} />
            </p>
            <pre class="wrap" safe>
              {n.body}
            </pre>
          </article>
        ))
      )}
    </>
  );
}
