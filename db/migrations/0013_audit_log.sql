CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`actor_kind` text NOT NULL,
	`actor_id` text NOT NULL,
	`actor_email` text,
	`action` text NOT NULL,
	`object_kind` text NOT NULL,
	`object_id` text NOT NULL,
	`account_id` text,
	`ip` text,
	`changes` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_at` ON `audit_log` (`at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_log_account` ON `audit_log` (`account_id`,`at`,`id`);