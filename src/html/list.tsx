import { escapeHtml, type Children } from "@kitajs/html";

/** Whether any filter is set (`cursor` is the page, not a filter), so an empty list says "match this filter" rather than "yet". */
export const isFiltered = (filter: object) => Object.entries(filter).some(([name, v]) => v && name !== "cursor");

/** The address of a page of a filtered list: the filter as it stands, and the page's cursor if any. */
export function pageLinks(path: string, filter: object) {
  return (cursor: string | null) => {
    const query = new URLSearchParams(
      Object.entries(filter).filter(([name, v]) => v && name !== "cursor") as [string, string][],
    );
    if (cursor) query.set("cursor", cursor);
    const text = query.toString();
    return `${path}${text ? `?${text}` : ""}`;
  };
}

/** A choice of a list's filter form: "any" (the empty value) or one of the options. */
export function FilterSelect(props: {
  id: string;
  name: string;
  label: string;
  any: string;
  value: string | undefined;
  options: readonly (string | { value: string; text: string })[];
}) {
  return (
    <div>
      <label for={props.id}>{escapeHtml(props.label)}</label>
      <select id={props.id} name={props.name}>
        <option value="" selected={!props.value}>
          {escapeHtml(props.any)}
        </option>
        {props.options.map((option) => {
          const { value, text } = typeof option === "string" ? { value: option, text: option } : option;
          return (
            <option value={value} selected={props.value === value} safe>
              {text}
            </option>
          );
        })}
      </select>
    </div>
  );
}

/** The number filter of a list: all numbers, or one of the account's. */
export function NumberFilter(props: { value: string | undefined; numbers: readonly string[] }) {
  return (
    <FilterSelect
      id="filter-number"
      name="number"
      label="Number"
      any="All numbers"
      value={props.value}
      options={props.numbers}
    />
  );
}

/** A table head's column: its name, right-aligned for numbers, or read only by screen readers. */
export type Column = string | { text: string; num?: boolean; hidden?: boolean };

function ColumnHead(props: { column: Column }) {
  const c = typeof props.column === "string" ? { text: props.column } : props.column;
  if (c.hidden)
    return (
      <th scope="col">
        <span class="visually-hidden">{escapeHtml(c.text)}</span>
      </th>
    );
  return (
    <th scope="col" class={c.num ? "num" : undefined}>
      {escapeHtml(c.text)}
    </th>
  );
}

/** A list as a table that turns into cards on narrow screens; the rows are the children. */
export function CardsTable(props: { caption: string; columns: readonly Column[]; children: Children }) {
  return (
    <div class="table-wrap">
      <table class="cards">
        <caption class="visually-hidden">{escapeHtml(props.caption)}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <ColumnHead column={column} />
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
