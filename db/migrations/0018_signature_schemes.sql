ALTER TABLE `deliveries` ADD `signature` text DEFAULT 'standard' NOT NULL;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `signature` text DEFAULT 'standard' NOT NULL;--> statement-breakpoint
ALTER TABLE `endpoints` ADD `verify_token_enc` text;