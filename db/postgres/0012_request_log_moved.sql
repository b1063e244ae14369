ALTER TABLE "request_log" DROP CONSTRAINT "request_log_account_id_accounts_id_fk";
--> statement-breakpoint
ALTER TABLE "usage_hours" DROP CONSTRAINT "usage_hours_account_id_accounts_id_fk";
--> statement-breakpoint
DROP INDEX "request_log_message";--> statement-breakpoint
CREATE INDEX "request_log_message" ON "request_log" USING btree ("message_id") WHERE "request_log"."message_id" IS NOT NULL;