import { escapeHtml } from "@kitajs/html";
import { accountPath, count } from "./words.tsx";

/** One column of a console table: its heading, how a row fills its cell, and the cell's label on a narrow screen. */
export interface Column<T> {
  head: string;
  /** The heading for screen readers only (an actions column). */
  hidden?: true;
  /** The cell's `data-label`, where it is shorter than the heading. */
  label?: string;
  /** A count: heading and cell aligned right. */
  num?: true;
  /** The cell's other class. */
  class?: string;
  cell: (row: T) => JSX.Element;
}

/** A column of counts, written the console's way. */
export function countColumn<T>(head: string, of: (row: T) => number, label?: string): Column<T> {
  return { head, label, num: true, cell: (r) => escapeHtml(count(of(r))) };
}

/**
 * The console's tables: cards on a narrow screen, named by a hidden caption or by the heading
 * above them; a panel saying `empty` where there is no row.
 */
export function Table<T>(props: {
  rows: readonly T[];
  columns: readonly Column<T>[];
  empty: string;
  caption?: string;
  labelledBy?: string;
}) {
  if (props.rows.length === 0) return <p class="panel">{escapeHtml(props.empty)}</p>;
  return (
    <div class="table-wrap">
      <table class="cards" aria-labelledby={props.labelledBy}>
        {props.caption ? <caption class="visually-hidden">{escapeHtml(props.caption)}</caption> : ""}
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" class={c.num ? "num" : undefined}>
                {c.hidden ? <span class="visually-hidden">{escapeHtml(c.head)}</span> : escapeHtml(c.head)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr>
              {props.columns.map((c) => (
                <td data-label={c.label ?? c.head} class={c.num ? "num" : c.class}>
                  {c.cell(r)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A column naming each row's account, linked to its page. */
export function accountColumn<T>(of: (row: T) => { id: string; name: string }): Column<T> {
  return {
    head: "Account",
    cell: (r) => {
      const a = of(r);
      return (
        <a href={accountPath(a.id)} safe>
          {a.name}
        </a>
      );
    },
  };
}
