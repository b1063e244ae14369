CREATE TABLE `recoveries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`since` integer NOT NULL,
	`until` integer NOT NULL,
	`status` text NOT NULL,
	`found` integer NOT NULL,
	`replayed` integer NOT NULL,
	`skipped_expired` integer NOT NULL,
	`skipped_replayed` integer NOT NULL,
	`cursor_at` integer,
	`cursor_id` text,
	`started_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`endpoint_id`) REFERENCES `endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `recoveries_running` ON `recoveries` (`endpoint_id`) WHERE "recoveries"."status" = 'running';--> statement-breakpoint
CREATE INDEX `recoveries_endpoint` ON `recoveries` (`endpoint_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `deliveries_replay_of` ON `deliveries` (`replay_of`) WHERE "deliveries"."replay_of" IS NOT NULL;