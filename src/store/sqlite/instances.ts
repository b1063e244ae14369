import type { Beat, InstanceStore } from "../instances.ts";

/**
 * Instances on SQLite: one server process holds the file (server-lock.ts), so it is the only
 * instance there is: there are no others to list, nor leases of theirs to take back, and its own
 * earlier run's leases are released at start (SqliteQueue.recoverLeases).
 */
export class SqliteInstances implements InstanceStore {
  constructor(readonly self: string) {}

  async beat(): Promise<Beat> {
    return { others: [], takenForDead: false, shared: false };
  }

  async takeBack(): Promise<number> {
    return 0;
  }

  async leave(): Promise<void> {}

  async forgetGone(): Promise<number> {
    return 0;
  }
}
