-- The statement (C24) shows each entry in the currency it moved: until now every account was in the store's one
-- currency, which is what the account holds today, so that is what the entries written so far moved.
ALTER TABLE "balance_ledger" ADD COLUMN "currency" varchar(3);--> statement-breakpoint
UPDATE "balance_ledger" l SET "currency" = a."currency" FROM "accounts" a WHERE a."id" = l."account_id";--> statement-breakpoint
ALTER TABLE "balance_ledger" ALTER COLUMN "currency" SET NOT NULL;
