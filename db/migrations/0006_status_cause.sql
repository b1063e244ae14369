ALTER TABLE `numbers` ADD `cause_code` integer;--> statement-breakpoint
ALTER TABLE `numbers` ADD `cause_message` text;--> statement-breakpoint
ALTER TABLE `numbers` ADD `cause_at` integer;--> statement-breakpoint
ALTER TABLE `numbers` ADD `cause_request_id` text;--> statement-breakpoint
ALTER TABLE `wabas` ADD `cause_code` integer;--> statement-breakpoint
ALTER TABLE `wabas` ADD `cause_message` text;--> statement-breakpoint
ALTER TABLE `wabas` ADD `cause_at` integer;--> statement-breakpoint
ALTER TABLE `wabas` ADD `cause_request_id` text;