ALTER TABLE "numbers" ADD COLUMN "cause_code" integer;--> statement-breakpoint
ALTER TABLE "numbers" ADD COLUMN "cause_message" text;--> statement-breakpoint
ALTER TABLE "numbers" ADD COLUMN "cause_at" bigint;--> statement-breakpoint
ALTER TABLE "numbers" ADD COLUMN "cause_request_id" text;--> statement-breakpoint
ALTER TABLE "wabas" ADD COLUMN "cause_code" integer;--> statement-breakpoint
ALTER TABLE "wabas" ADD COLUMN "cause_message" text;--> statement-breakpoint
ALTER TABLE "wabas" ADD COLUMN "cause_at" bigint;--> statement-breakpoint
ALTER TABLE "wabas" ADD COLUMN "cause_request_id" text;