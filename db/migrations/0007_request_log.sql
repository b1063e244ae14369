CREATE TABLE `request_log` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`at` integer NOT NULL,
	`api_key_id` text NOT NULL,
	`method` text NOT NULL,
	`route` text,
	`phone_number_id` text,
	`waba_id` text,
	`status` integer NOT NULL,
	`error_code` integer,
	`upstream_status` integer,
	`upstream_error_code` integer,
	`upstream_error_subcode` integer,
	`upstream_ms` real,
	`request_bytes` integer,
	`response_bytes` integer,
	`message_id` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `request_log_account` ON `request_log` (`account_id`,`at`,`id`);--> statement-breakpoint
CREATE INDEX `request_log_message` ON `request_log` (`message_id`);--> statement-breakpoint
CREATE TABLE `usage_hours` (
	`account_id` text NOT NULL,
	`target_id` text NOT NULL,
	`hour` integer NOT NULL,
	`kind` text NOT NULL,
	`label` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`account_id`, `hour`, `target_id`, `kind`, `label`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
