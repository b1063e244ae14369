ALTER TABLE `onboardings` ADD `code_hash` text;--> statement-breakpoint
ALTER TABLE `onboardings` ADD `expires_at` integer;--> statement-breakpoint
CREATE INDEX `onboardings_account` ON `onboardings` (`account_id`);--> statement-breakpoint
CREATE INDEX `onboardings_expires` ON `onboardings` (`expires_at`) WHERE "onboardings"."expires_at" IS NOT NULL;--> statement-breakpoint
-- Signups not finished expire an hour after their last write (EMBEDDED_SIGNUP_EXPIRY's default);
-- finished ones keep no code, token or PIN.
UPDATE `onboardings` SET `expires_at` = `updated_at` + 3600000 WHERE `finished_at` IS NULL;--> statement-breakpoint
UPDATE `onboardings` SET `code_enc` = NULL, `access_token_enc` = NULL, `pin_enc` = NULL WHERE `finished_at` IS NOT NULL;
