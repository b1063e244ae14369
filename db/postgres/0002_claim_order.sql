DROP INDEX "deliveries_due";--> statement-breakpoint
CREATE INDEX "deliveries_due" ON "deliveries" USING btree ("endpoint_id","next_attempt_at","id") WHERE "deliveries"."status" = 'pending';