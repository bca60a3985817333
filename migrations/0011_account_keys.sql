CREATE TABLE "account_keys" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "account_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"public_key" varchar(64) NOT NULL,
	"secret_key_hash" "bytea" NOT NULL,
	"mode" varchar(4) DEFAULT 'live' NOT NULL,
	"scope" varchar(4) DEFAULT 'full' NOT NULL,
	"last_used_at" timestamp(6) with time zone,
	"revoked_at" timestamp(6) with time zone,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "account_keys_mode_ck" CHECK ("account_keys"."mode" in ('live', 'test')),
	CONSTRAINT "account_keys_scope_ck" CHECK ("account_keys"."scope" in ('full', 'read'))
);
--> statement-breakpoint
ALTER TABLE "auth_tokens" ADD COLUMN "key_id" integer;--> statement-breakpoint
ALTER TABLE "account_keys" ADD CONSTRAINT "account_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "account_keys_public_key_uq" ON "account_keys" USING btree ("public_key");--> statement-breakpoint
CREATE INDEX "account_keys_account_idx" ON "account_keys" USING btree ("account_id");--> statement-breakpoint
-- NOT VALID: tokens already issued have no key (null passes anyway), and a large token table is not scanned under
-- a lock that would hold back token exchanges; new rows are checked from here on.
ALTER TABLE "auth_tokens" ADD CONSTRAINT "auth_tokens_key_id_account_keys_id_fk" FOREIGN KEY ("key_id") REFERENCES "public"."account_keys"("id") ON DELETE cascade ON UPDATE no action NOT VALID;--> statement-breakpoint
-- Every account's key pair becomes its first live, full key.
INSERT INTO "account_keys" ("account_id", "public_key", "secret_key_hash", "mode", "scope", "last_used_at", "created_at")
SELECT "id", "public_key", "secret_key_hash", 'live', 'full', "last_seen_at", "created_at" FROM "accounts" ORDER BY "id";