DROP TABLE `operator_sign_in_failures`;--> statement-breakpoint
DROP TABLE `sign_in_failures`;