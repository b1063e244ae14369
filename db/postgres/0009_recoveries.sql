CREATE TABLE "recoveries" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"since" bigint NOT NULL,
	"until" bigint NOT NULL,
	"status" text NOT NULL,
	"found" integer NOT NULL,
	"replayed" integer NOT NULL,
	"skipped_expired" integer NOT NULL,
	"skipped_replayed" integer NOT NULL,
	"cursor_at" bigint,
	"cursor_id" text,
	"started_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "recoveries" ADD CONSTRAINT "recoveries_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recoveries" ADD CONSTRAINT "recoveries_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "recoveries_running" ON "recoveries" USING btree ("endpoint_id") WHERE "recoveries"."status" = 'running';--> statement-breakpoint
CREATE INDEX "recoveries_endpoint" ON "recoveries" USING btree ("endpoint_id","started_at");--> statement-breakpoint
CREATE INDEX "deliveries_replay_of" ON "deliveries" USING btree ("replay_of") WHERE "deliveries"."replay_of" IS NOT NULL;