ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_account_id_accounts_id_fk";
--> statement-breakpoint
DROP INDEX "deliveries_pending";