CREATE TABLE "event_messages" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL,
	"account_id" text NOT NULL,
	"message_id" text NOT NULL,
	"phone_number_id" text,
	"kind" text NOT NULL,
	"status" text,
	"error_code" integer,
	"received_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "event_messages" ADD CONSTRAINT "event_messages_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "event_messages_message" ON "event_messages" USING btree ("account_id","message_id");--> statement-breakpoint
CREATE INDEX "event_messages_event" ON "event_messages" USING btree ("event_id");