import { desc, eq } from "drizzle-orm";
import type { NotificationStore } from "../store.ts";
import type { Notification } from "../types.ts";
import type { Db } from "./open.ts";
import { notifications } from "./schema.ts";

export class SqliteNotifications implements NotificationStore {
  constructor(private readonly db: Db) {}
  async add(notification: Notification) {
    this.db.insert(notifications).values(notification).run();
  }
  async list(accountId: string, limit = 100) {
    return this.db
      .select()
      .from(notifications)
      .where(eq(notifications.accountId, accountId))
      .orderBy(desc(notifications.createdAt))
      .limit(limit)
      .all();
  }
  async markEmailed(id: string, at: number) {
    this.db.update(notifications).set({ emailedAt: at }).where(eq(notifications.id, id)).run();
  }
}
