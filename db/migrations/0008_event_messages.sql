CREATE TABLE `event_messages` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` text NOT NULL,
	`account_id` text NOT NULL,
	`message_id` text NOT NULL,
	`phone_number_id` text,
	`kind` text NOT NULL,
	`status` text,
	`error_code` integer,
	`received_at` integer NOT NULL,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `event_messages_message` ON `event_messages` (`account_id`,`message_id`);--> statement-breakpoint
CREATE INDEX `event_messages_event` ON `event_messages` (`event_id`);