/**
 * Row (q) of the proxy bench is Switchboard with REQUEST_LOG=0; row (d) keeps the log (the
 * default). This reads row (d)'s request log (its own file beside the database) for the log's disk
 * use: pages in use (not the file's size, which free pages and the WAL blur) and the records
 * written, taken before and after.
 */
import { Database } from "bun:sqlite";
import { requestLogPath } from "../../src/store/sqlite/request-log-file.ts";

export function logFootprint(dbPath: string): { bytes: number; records: number } {
  const db = new Database(requestLogPath(dbPath), { readonly: true });
  try {
    const pages = db
      .query<{ n: number }, []>(
        "SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count()) AS n",
      )
      .get()!.n;
    const size = db.query<{ page_size: number }, []>("PRAGMA page_size").get()!.page_size;
    const records = db.query<{ n: number }, []>("SELECT count(*) AS n FROM request_log").get()!.n;
    return { bytes: pages * size, records };
  } finally {
    db.close();
  }
}
