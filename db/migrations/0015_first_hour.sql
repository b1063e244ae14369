CREATE TABLE `event_hours` (
	`hour` integer PRIMARY KEY NOT NULL,
	`received` integer NOT NULL,
	`unrouted` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `users` ADD `last_sign_in_at` integer;--> statement-breakpoint
CREATE INDEX `sessions_user` ON `sessions` (`user_id`);