import type { Retention } from "../../store/types.ts";

export function SettingsPage(props: { retention: Retention; flash?: JSX.Element }) {
  const { flash = "" } = props;
  const option = (value: Retention, title: string, hint: string) => (
    <label class="choice">
      <input type="radio" name="retention" value={value} checked={props.retention === value} />
      <span>
        <strong safe>{title}</strong>{" "}
        <span class="hint" safe>
          {hint}
        </span>
      </span>
    </label>
  );
  return (
    <>
      <h1>Settings</h1>
      {flash}
      <section class="panel" aria-labelledby="retention-heading">
        <h2 id="retention-heading">Delivery retention</h2>
        <p class="small">
          How long webhook deliveries, their attempts and payloads are kept. A delivery can be replayed only while it is
          kept.
        </p>
        <form method="post" action="/dashboard/settings" class="stack">
          <fieldset>
            <legend>Keep deliveries for</legend>
            {option("24h", "24 hours", "less stored data")}
            {option("7d", "7 days", "more time to replay after an outage")}
          </fieldset>
          <div>
            <button type="submit">Save</button>
          </div>
        </form>
      </section>
    </>
  );
}
