import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

/** A table both backends have, with the columns both have and how PostgreSQL types each. */
export interface TablePlan {
  name: string;
  columns: { name: string; pgType: string }[];
  /** Columns filled from a sequence in PostgreSQL: set past the copied values afterwards. */
  serials: string[];
}

/**
 * What a move copies: every table of the SQLite file that PostgreSQL's schema also has (so the
 * tables a later release adds come along without a change here), parents before children by
 * PostgreSQL's foreign keys. Bookkeeping that is each backend's own (SQLite's `meta`, PostgreSQL's
 * change counter, the migration records) exists on one side only and is left out.
 */
export async function planTables(sqlite: Database, pg: SQL): Promise<TablePlan[]> {
  const local = new Set(
    sqlite
      .query<{ name: string }, []>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%'",
      )
      .all()
      .map((row) => row.name),
  );
  const columns =
    (await pg.unsafe(`SELECT table_name, column_name, data_type, column_default FROM information_schema.columns
    WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)) as {
      table_name: string;
      column_name: string;
      data_type: string;
      column_default: string | null;
    }[];
  const parents = (await pg.unsafe(`SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
    FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`)) as {
    child: string;
    parent: string;
  }[];

  const plans = new Map<string, TablePlan>();
  for (const column of columns) {
    if (!local.has(column.table_name)) continue;
    const localColumns = new Set(
      sqlite
        .query<{ name: string }, []>(`PRAGMA table_info("${column.table_name}")`)
        .all()
        .map((c) => c.name),
    );
    if (!localColumns.has(column.column_name)) continue;
    const plan = plans.get(column.table_name) ?? { name: column.table_name, columns: [], serials: [] };
    plan.columns.push({ name: column.column_name, pgType: column.data_type });
    if (column.column_default?.startsWith("nextval(")) plan.serials.push(column.column_name);
    plans.set(column.table_name, plan);
  }
  return parentsFirst([...plans.values()], parents);
}

function parentsFirst(tables: TablePlan[], links: { child: string; parent: string }[]): TablePlan[] {
  const ordered: TablePlan[] = [];
  const placed = new Set<string>();
  const visit = (table: TablePlan, path: Set<string>) => {
    if (placed.has(table.name) || path.has(table.name)) return;
    path.add(table.name);
    for (const link of links) {
      const parent = tables.find((t) => t.name === link.parent);
      if (link.child === table.name && parent && parent !== table) visit(parent, path);
    }
    placed.add(table.name);
    ordered.push(table);
  };
  for (const table of [...tables].sort((a, b) => a.name.localeCompare(b.name))) visit(table, new Set());
  return ordered;
}
