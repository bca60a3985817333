DROP INDEX "balance_ledger_account_idx";--> statement-breakpoint
DROP INDEX "orders_account_list_idx";--> statement-breakpoint
ALTER TABLE "idempotency_keys" ALTER COLUMN "key" SET DATA TYPE varchar(260);--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "test_balance" numeric(14, 2);--> statement-breakpoint
ALTER TABLE "balance_ledger" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX "balance_ledger_account_idx" ON "balance_ledger" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "orders_account_list_idx" ON "orders" USING btree ("account_id","livemode","kind","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_test_balance_non_negative" CHECK ("accounts"."test_balance" >= 0);