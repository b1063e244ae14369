CREATE TABLE `onboardings` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`phone_number_id` text NOT NULL,
	`waba_id` text NOT NULL,
	`kind` text NOT NULL,
	`code_enc` text,
	`access_token_enc` text,
	`pin_enc` text,
	`steps` text NOT NULL,
	`preflights` text NOT NULL,
	`syncs` text NOT NULL,
	`finished_at` integer,
	`lease_until` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `onboardings_number` ON `onboardings` (`phone_number_id`);