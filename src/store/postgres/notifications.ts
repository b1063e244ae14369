import { desc, eq } from "drizzle-orm";
import type { NotificationStore } from "../store.ts";
import type { Notification } from "../types.ts";
import type { PgDb } from "./connect.ts";
import { notifications } from "./schema.ts";

export class PgNotifications implements NotificationStore {
  constructor(private readonly db: PgDb) {}
  async add(notification: Notification) {
    await this.db.insert(notifications).values(notification);
  }
  async list(accountId: string, limit = 100) {
    return this.db
      .select()
      .from(notifications)
      .where(eq(notifications.accountId, accountId))
      .orderBy(desc(notifications.createdAt))
      .limit(limit);
  }
  async markEmailed(id: string, at: number) {
    await this.db.update(notifications).set({ emailedAt: at }).where(eq(notifications.id, id));
  }
}
