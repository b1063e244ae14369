CREATE TABLE "event_hours" (
	"hour" bigint PRIMARY KEY NOT NULL,
	"received" integer NOT NULL,
	"unrouted" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "last_sign_in_at" bigint;--> statement-breakpoint
CREATE INDEX "sessions_user" ON "sessions" USING btree ("user_id");