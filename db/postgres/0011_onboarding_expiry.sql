ALTER TABLE "onboardings" ADD COLUMN "code_hash" text;--> statement-breakpoint
ALTER TABLE "onboardings" ADD COLUMN "expires_at" bigint;--> statement-breakpoint
CREATE INDEX "onboardings_account" ON "onboardings" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "onboardings_expires" ON "onboardings" USING btree ("expires_at") WHERE "onboardings"."expires_at" IS NOT NULL;--> statement-breakpoint
-- Signups not finished expire an hour after their last write (EMBEDDED_SIGNUP_EXPIRY's default);
-- finished ones keep no code, token or PIN.
UPDATE "onboardings" SET "expires_at" = "updated_at" + 3600000 WHERE "finished_at" IS NULL;--> statement-breakpoint
UPDATE "onboardings" SET "code_enc" = NULL, "access_token_enc" = NULL, "pin_enc" = NULL WHERE "finished_at" IS NOT NULL;
