CREATE TABLE "onboardings" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"phone_number_id" text NOT NULL,
	"waba_id" text NOT NULL,
	"kind" text NOT NULL,
	"code_enc" text,
	"access_token_enc" text,
	"pin_enc" text,
	"steps" text NOT NULL,
	"preflights" text NOT NULL,
	"syncs" text NOT NULL,
	"finished_at" bigint,
	"lease_until" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "onboardings" ADD CONSTRAINT "onboardings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "onboardings_number" ON "onboardings" USING btree ("phone_number_id");