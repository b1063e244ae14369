import { escapeHtml } from "@kitajs/html";
import { Time } from "../../html/components.tsx";
import type { NumberHealth } from "../reports.ts";
import { accountColumn, type Column } from "./table.tsx";
import { accountPath, Health, NumberName, numberName } from "./words.tsx";

/** The columns the console's tables of numbers share: the number, its account, its health, its last check, Check again. */

export const NUMBER: Column<NumberHealth> = { head: "Number", cell: (h) => <NumberName number={h.number} /> };

export const OWNER = accountColumn<NumberHealth>((h) => h.account);

export const HEALTH: Column<NumberHealth> = { head: "Health", cell: (h) => <Health health={h} /> };

export const lastChecked = (now: number): Column<NumberHealth> => ({
  head: "Last checked",
  cell: (h) => <Time at={h.number.syncedAt} now={now} />,
});

/** Check again: the operator API's sync, which re-reads the number upstream and so checks its condition. */
export function CheckAgain(props: { health: NumberHealth; back: "account" | "numbers" }) {
  const { number, account } = props.health;
  const label = "Check again";
  return (
    <form method="post" action={`${accountPath(account.id)}/numbers/${encodeURIComponent(number.phoneNumberId)}/check`}>
      <input type="hidden" name="back" value={props.back} />
      <button type="submit" class="secondary" aria-label={`${label} ${numberName(number)}`}>
        {escapeHtml(label)}
      </button>
    </form>
  );
}

export const checkAgain = (back: "account" | "numbers"): Column<NumberHealth> => ({
  head: "Actions",
  hidden: true,
  cell: (h) => <CheckAgain health={h} back={back} />,
});
