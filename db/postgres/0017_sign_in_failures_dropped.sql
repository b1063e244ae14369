DROP TABLE "operator_sign_in_failures" CASCADE;--> statement-breakpoint
DROP TABLE "sign_in_failures" CASCADE;