CREATE TABLE "request_log" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"at" bigint NOT NULL,
	"api_key_id" text NOT NULL,
	"method" text NOT NULL,
	"route" text,
	"phone_number_id" text,
	"waba_id" text,
	"status" integer NOT NULL,
	"error_code" integer,
	"upstream_status" integer,
	"upstream_error_code" integer,
	"upstream_error_subcode" integer,
	"upstream_ms" double precision,
	"request_bytes" bigint,
	"response_bytes" bigint,
	"message_id" text
);
--> statement-breakpoint
CREATE TABLE "usage_hours" (
	"account_id" text NOT NULL,
	"target_id" text NOT NULL,
	"hour" bigint NOT NULL,
	"kind" text NOT NULL,
	"label" text NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "usage_hours_account_id_hour_target_id_kind_label_pk" PRIMARY KEY("account_id","hour","target_id","kind","label")
);
--> statement-breakpoint
ALTER TABLE "request_log" ADD CONSTRAINT "request_log_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_hours" ADD CONSTRAINT "usage_hours_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "request_log_account" ON "request_log" USING btree ("account_id","at","id");--> statement-breakpoint
CREATE INDEX "request_log_message" ON "request_log" USING btree ("message_id");