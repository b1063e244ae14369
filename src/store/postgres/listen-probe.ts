import type { SQL } from "bun";
import { ConfigError } from "../../config/errors.ts";

const PROBE_CHANNEL = "switchboard_probe";
/** Long enough for a busy server; a connection that hears itself does so within milliseconds. */
const PROBE_MS = 5_000;

/**
 * Checks, before anything is migrated, that a notification committed on the pool is heard on the
 * LISTEN connection: through PgBouncer in transaction (or statement) mode it is not (the LISTEN is
 * left on a server connection given to other clients), and the instance would neither hear other
 * instances' changes nor keep its migrations' lock (docs/operations.md#pgbouncer). Resolves with
 * the probe's subscription, held until the instance's own ones keep the connection open.
 */
export async function hearsItself(
  pool: SQL,
  listener: SQL,
  token: string,
  direct: boolean,
): Promise<{ unlisten(): Promise<void> }> {
  let heard: () => void = () => {};
  const arrived = new Promise<void>((resolve) => (heard = resolve));
  const subscription = await listener.listen(PROBE_CHANNEL, (payload) => payload === token && heard());
  await pool.unsafe("SELECT pg_notify($1, $2)", [PROBE_CHANNEL, token]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PROBE_MS)));
  const inTime = await Promise.race([arrived.then(() => true), late]);
  clearTimeout(timer);
  if (inTime) return subscription;
  await subscription.unlisten().catch(() => {});
  const variable = direct ? "DATABASE_DIRECT_URL" : "DATABASE_URL";
  throw new ConfigError(
    variable,
    direct
      ? `a notification committed through DATABASE_URL was not heard on a LISTEN connection to DATABASE_DIRECT_URL within ${PROBE_MS / 1000} s; give DATABASE_DIRECT_URL a direct connection to the same database (docs/operations.md#pgbouncer)`
      : `a notification committed through it was not heard on its own LISTEN connection within ${PROBE_MS / 1000} s (PgBouncer in transaction or statement mode?); set DATABASE_DIRECT_URL to a direct connection to the same database (docs/operations.md#pgbouncer)`,
  );
}
