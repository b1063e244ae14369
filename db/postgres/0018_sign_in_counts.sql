CREATE TABLE "sign_in_counts" (
	"key" text PRIMARY KEY NOT NULL,
	"count" integer NOT NULL,
	"since" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sign_in_counts_since" ON "sign_in_counts" USING btree ("since");