CREATE TABLE "accounts" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "accounts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"firstname" varchar(100) NOT NULL,
	"lastname" varchar(100) NOT NULL,
	"username" varchar(100) NOT NULL,
	"email" varchar(255),
	"image" text,
	"image_driver" varchar(20) DEFAULT 'local' NOT NULL,
	"balance" numeric(14, 2) DEFAULT '0' NOT NULL,
	"currency" varchar(3) NOT NULL,
	"currency_symbol" varchar(8) NOT NULL,
	"public_key" varchar(64) NOT NULL,
	"secret_key_hash" "bytea" NOT NULL,
	"api_key_hash" "bytea",
	"profile_heading" text,
	"profile_description" text,
	"contact_email" varchar(255),
	"social_links" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"avatar" text,
	"cover" text,
	"last_seen_at" timestamp(6) with time zone,
	"top_up_order_count" integer DEFAULT 0 NOT NULL,
	"card_order_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "accounts_balance_non_negative" CHECK ("accounts"."balance" >= 0)
);
--> statement-breakpoint
CREATE TABLE "auth_tokens" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "auth_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"token_hash" "bytea" NOT NULL,
	"expires_at" timestamp(6) with time zone NOT NULL,
	"revoked_at" timestamp(6) with time zone,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "balance_ledger" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "balance_ledger_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"amount" numeric(14, 2) NOT NULL,
	"balance_after" numeric(14, 2) NOT NULL,
	"kind" varchar(16) NOT NULL,
	"order_id" bigint,
	"reason" text,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaign_card_services" (
	"campaign_id" integer NOT NULL,
	"price" numeric(14, 2) NOT NULL,
	"discount" numeric(14, 2) DEFAULT '0' NOT NULL,
	"discount_type" varchar(10) DEFAULT 'flat' NOT NULL,
	"max_sell" integer NOT NULL,
	"left_at" timestamp(6) with time zone,
	"card_service_id" integer NOT NULL,
	CONSTRAINT "campaign_card_services_campaign_id_card_service_id_pk" PRIMARY KEY("campaign_id","card_service_id")
);
--> statement-breakpoint
CREATE TABLE "campaign_top_up_services" (
	"campaign_id" integer NOT NULL,
	"price" numeric(14, 2) NOT NULL,
	"discount" numeric(14, 2) DEFAULT '0' NOT NULL,
	"discount_type" varchar(10) DEFAULT 'flat' NOT NULL,
	"max_sell" integer NOT NULL,
	"left_at" timestamp(6) with time zone,
	"top_up_service_id" integer NOT NULL,
	CONSTRAINT "campaign_top_up_services_campaign_id_top_up_service_id_pk" PRIMARY KEY("campaign_id","top_up_service_id")
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "campaigns_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" varchar(160) NOT NULL,
	"start_date" date NOT NULL,
	"end_date" date NOT NULL,
	"status" smallint DEFAULT 1 NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "card_codes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "card_codes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"card_service_id" integer NOT NULL,
	"code_encrypted" "bytea" NOT NULL,
	"code_digest" "bytea" NOT NULL,
	"order_line_id" bigint,
	"assigned_at" timestamp(6) with time zone,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "card_services" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "card_services_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" varchar(160) NOT NULL,
	"image" text DEFAULT '' NOT NULL,
	"image_driver" varchar(20) DEFAULT 'local' NOT NULL,
	"price" numeric(14, 2) NOT NULL,
	"discount" numeric(14, 2) DEFAULT '0' NOT NULL,
	"discount_type" varchar(10) DEFAULT 'flat' NOT NULL,
	"status" smallint DEFAULT 1 NOT NULL,
	"is_offered" smallint DEFAULT 0 NOT NULL,
	"offered_sell" integer DEFAULT 0 NOT NULL,
	"max_sell" integer DEFAULT 0 NOT NULL,
	"sort_by" integer DEFAULT 0 NOT NULL,
	"old_data" jsonb,
	"campaign_data" jsonb,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"card_id" integer NOT NULL,
	CONSTRAINT "card_services_cap_ck" CHECK ("card_services"."offered_sell" <= "card_services"."max_sell" or "card_services"."is_offered" = 0),
	CONSTRAINT "card_services_discount_type_ck" CHECK ("card_services"."discount_type" in ('percentage', 'flat'))
);
--> statement-breakpoint
CREATE TABLE "cards" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "cards_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"category_id" integer NOT NULL,
	"name" varchar(160) NOT NULL,
	"slug" varchar(160) NOT NULL,
	"region" varchar(120) DEFAULT 'Global' NOT NULL,
	"note" text,
	"status" smallint DEFAULT 1 NOT NULL,
	"instant_delivery" smallint DEFAULT 1 NOT NULL,
	"image" jsonb NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"guide" text DEFAULT '' NOT NULL,
	"total_review" integer DEFAULT 0 NOT NULL,
	"avg_rating" numeric(3, 2) DEFAULT '0' NOT NULL,
	"sell_count" integer DEFAULT 0 NOT NULL,
	"trending" smallint DEFAULT 0 NOT NULL,
	"sort_by" smallint DEFAULT 1 NOT NULL,
	"deleted_at" timestamp(6) with time zone,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "categories" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "categories_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" varchar(120) NOT NULL,
	"icon" varchar(120) NOT NULL,
	"type" varchar(8) NOT NULL,
	"status" smallint DEFAULT 1 NOT NULL,
	"sort_by" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "categories_type_ck" CHECK ("categories"."type" in ('top_up', 'card'))
);
--> statement-breakpoint
CREATE TABLE "gateways" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "gateways_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"code" varchar(60) NOT NULL,
	"name" varchar(120) NOT NULL,
	"sort_by" integer DEFAULT 0 NOT NULL,
	"image" text DEFAULT '' NOT NULL,
	"driver" varchar(20) DEFAULT 'local' NOT NULL,
	"status" smallint DEFAULT 1 NOT NULL,
	"parameters" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"currencies" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"extra_parameters" jsonb,
	"supported_currency" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"receivable_currencies" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"currency_type" smallint DEFAULT 1 NOT NULL,
	"is_sandbox" smallint DEFAULT 0 NOT NULL,
	"environment" varchar(20) DEFAULT 'live' NOT NULL,
	"is_manual" smallint,
	"note" text,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"account_id" integer NOT NULL,
	"key" varchar(255) NOT NULL,
	"endpoint" varchar(40) NOT NULL,
	"request_digest" "bytea" NOT NULL,
	"response_status" smallint,
	"response_body" jsonb,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_account_id_key_pk" PRIMARY KEY("account_id","key")
);
--> statement-breakpoint
CREATE TABLE "license_items" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "license_items_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"name" varchar(200) NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"category" varchar(120) NOT NULL,
	"sub_category" varchar(120) DEFAULT '' NOT NULL,
	"options" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"version" varchar(40) NOT NULL,
	"demo_link" text DEFAULT '' NOT NULL,
	"tags" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"media_kind" varchar(8) NOT NULL,
	"thumbnail" text NOT NULL,
	"preview_image" text,
	"preview_video" text,
	"preview_audio" text,
	"screenshots" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"price_regular" numeric(14, 2) NOT NULL,
	"price_extended" numeric(14, 2) NOT NULL,
	"currency" varchar(3) NOT NULL,
	"published_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "license_items_media_kind_ck" CHECK ("license_items"."media_kind" in ('image', 'audio', 'video'))
);
--> statement-breakpoint
CREATE TABLE "license_purchases" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "license_purchases_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"item_id" integer NOT NULL,
	"code_hash" "bytea" NOT NULL,
	"license_type" varchar(40) DEFAULT 'Regular' NOT NULL,
	"price" numeric(14, 2) NOT NULL,
	"currency" varchar(3) NOT NULL,
	"supported_until" timestamp(6) with time zone,
	"downloaded" boolean DEFAULT false NOT NULL,
	"purchased_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "order_lines" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "order_lines_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"order_id" bigint NOT NULL,
	"top_up_service_id" integer,
	"card_service_id" integer,
	"card_id" integer,
	"quantity" integer NOT NULL,
	"base_price" numeric(14, 2) NOT NULL,
	"discount" numeric(14, 2) NOT NULL,
	"unit_price" numeric(14, 2) NOT NULL,
	"campaign_units" integer DEFAULT 0 NOT NULL,
	"campaign_unit_price" numeric(14, 2),
	"campaign_id" integer,
	"line_total" numeric(14, 2) NOT NULL,
	"codes_owed" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "order_lines_quantity_ck" CHECK ("order_lines"."quantity" > 0)
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "orders_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"utr" varchar(32) NOT NULL,
	"account_id" integer NOT NULL,
	"kind" varchar(8) NOT NULL,
	"top_up_id" integer,
	"status" smallint DEFAULT 0 NOT NULL,
	"total" numeric(14, 2) NOT NULL,
	"currency" varchar(3) NOT NULL,
	"currency_symbol" varchar(8) NOT NULL,
	"informations" jsonb,
	"refunded_amount" numeric(14, 2) DEFAULT '0' NOT NULL,
	"note" text,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp(6) with time zone,
	CONSTRAINT "orders_status_ck" CHECK ("orders"."status" in (0, 1, 2, 3))
);
--> statement-breakpoint
CREATE TABLE "reviews" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "reviews_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"account_id" integer NOT NULL,
	"reviewable_type" varchar(8) NOT NULL,
	"reviewable_id" integer NOT NULL,
	"rating" numeric(3, 2) NOT NULL,
	"comment" text NOT NULL,
	"status" smallint DEFAULT 1 NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reviews_rating_ck" CHECK ("reviews"."rating" between 1 and 5)
);
--> statement-breakpoint
CREATE TABLE "top_up_services" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "top_up_services_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" varchar(160) NOT NULL,
	"image" text DEFAULT '' NOT NULL,
	"image_driver" varchar(20) DEFAULT 'local' NOT NULL,
	"price" numeric(14, 2) NOT NULL,
	"discount" numeric(14, 2) DEFAULT '0' NOT NULL,
	"discount_type" varchar(10) DEFAULT 'flat' NOT NULL,
	"status" smallint DEFAULT 1 NOT NULL,
	"is_offered" smallint DEFAULT 0 NOT NULL,
	"offered_sell" integer DEFAULT 0 NOT NULL,
	"max_sell" integer DEFAULT 0 NOT NULL,
	"sort_by" integer DEFAULT 0 NOT NULL,
	"old_data" jsonb,
	"campaign_data" jsonb,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"top_up_id" integer NOT NULL,
	CONSTRAINT "top_up_services_cap_ck" CHECK ("top_up_services"."offered_sell" <= "top_up_services"."max_sell" or "top_up_services"."is_offered" = 0),
	CONSTRAINT "top_up_services_discount_type_ck" CHECK ("top_up_services"."discount_type" in ('percentage', 'flat'))
);
--> statement-breakpoint
CREATE TABLE "top_ups" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "top_ups_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"category_id" integer NOT NULL,
	"name" varchar(160) NOT NULL,
	"slug" varchar(160) NOT NULL,
	"region" varchar(120) DEFAULT 'Global' NOT NULL,
	"note" text,
	"status" smallint DEFAULT 1 NOT NULL,
	"instant_delivery" smallint DEFAULT 0 NOT NULL,
	"image" jsonb NOT NULL,
	"order_information" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"guide" text DEFAULT '' NOT NULL,
	"total_review" integer DEFAULT 0 NOT NULL,
	"avg_rating" numeric(3, 2) DEFAULT '0' NOT NULL,
	"sort_by" smallint DEFAULT 1 NOT NULL,
	"deleted_at" timestamp(6) with time zone,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "auth_tokens" ADD CONSTRAINT "auth_tokens_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "balance_ledger" ADD CONSTRAINT "balance_ledger_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "balance_ledger" ADD CONSTRAINT "balance_ledger_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_card_services" ADD CONSTRAINT "campaign_card_services_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_card_services" ADD CONSTRAINT "campaign_card_services_card_service_id_card_services_id_fk" FOREIGN KEY ("card_service_id") REFERENCES "public"."card_services"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_top_up_services" ADD CONSTRAINT "campaign_top_up_services_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_top_up_services" ADD CONSTRAINT "campaign_top_up_services_top_up_service_id_top_up_services_id_fk" FOREIGN KEY ("top_up_service_id") REFERENCES "public"."top_up_services"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "card_codes" ADD CONSTRAINT "card_codes_card_service_id_card_services_id_fk" FOREIGN KEY ("card_service_id") REFERENCES "public"."card_services"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "card_codes" ADD CONSTRAINT "card_codes_order_line_id_order_lines_id_fk" FOREIGN KEY ("order_line_id") REFERENCES "public"."order_lines"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "card_services" ADD CONSTRAINT "card_services_card_id_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."cards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cards" ADD CONSTRAINT "cards_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "license_items" ADD CONSTRAINT "license_items_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "license_purchases" ADD CONSTRAINT "license_purchases_item_id_license_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "public"."license_items"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_top_up_service_id_top_up_services_id_fk" FOREIGN KEY ("top_up_service_id") REFERENCES "public"."top_up_services"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_card_service_id_card_services_id_fk" FOREIGN KEY ("card_service_id") REFERENCES "public"."card_services"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_card_id_cards_id_fk" FOREIGN KEY ("card_id") REFERENCES "public"."cards"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_top_up_id_top_ups_id_fk" FOREIGN KEY ("top_up_id") REFERENCES "public"."top_ups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_services" ADD CONSTRAINT "top_up_services_top_up_id_top_ups_id_fk" FOREIGN KEY ("top_up_id") REFERENCES "public"."top_ups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_ups" ADD CONSTRAINT "top_ups_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_public_key_uq" ON "accounts" USING btree ("public_key");--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_api_key_hash_uq" ON "accounts" USING btree ("api_key_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_username_uq" ON "accounts" USING btree ("username");--> statement-breakpoint
CREATE UNIQUE INDEX "auth_tokens_hash_uq" ON "auth_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "auth_tokens_account_idx" ON "auth_tokens" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "balance_ledger_account_idx" ON "balance_ledger" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "balance_ledger_order_kind_uq" ON "balance_ledger" USING btree ("order_id","kind") WHERE "balance_ledger"."order_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "card_codes_service_digest_uq" ON "card_codes" USING btree ("card_service_id","code_digest");--> statement-breakpoint
CREATE INDEX "card_codes_available_idx" ON "card_codes" USING btree ("card_service_id","id") WHERE "card_codes"."order_line_id" is null;--> statement-breakpoint
CREATE INDEX "card_codes_order_line_idx" ON "card_codes" USING btree ("order_line_id");--> statement-breakpoint
CREATE INDEX "card_services_card_idx" ON "card_services" USING btree ("card_id");--> statement-breakpoint
CREATE UNIQUE INDEX "cards_slug_uq" ON "cards" USING btree ("slug");--> statement-breakpoint
CREATE INDEX "cards_category_idx" ON "cards" USING btree ("category_id");--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "license_items_account_idx" ON "license_items" USING btree ("account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "license_purchases_code_hash_uq" ON "license_purchases" USING btree ("code_hash");--> statement-breakpoint
CREATE INDEX "license_purchases_item_idx" ON "license_purchases" USING btree ("item_id");--> statement-breakpoint
CREATE INDEX "order_lines_order_idx" ON "order_lines" USING btree ("order_id");--> statement-breakpoint
CREATE INDEX "order_lines_card_service_owed_idx" ON "order_lines" USING btree ("card_service_id","order_id") WHERE "order_lines"."codes_owed" > 0;--> statement-breakpoint
CREATE UNIQUE INDEX "orders_utr_uq" ON "orders" USING btree ("utr");--> statement-breakpoint
CREATE INDEX "orders_account_list_idx" ON "orders" USING btree ("account_id","kind","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "orders_status_idx" ON "orders" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "orders_account_top_up_idx" ON "orders" USING btree ("account_id","top_up_id");--> statement-breakpoint
CREATE UNIQUE INDEX "reviews_one_per_account_uq" ON "reviews" USING btree ("account_id","reviewable_type","reviewable_id");--> statement-breakpoint
CREATE INDEX "reviews_target_idx" ON "reviews" USING btree ("reviewable_type","reviewable_id","status","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "top_up_services_top_up_idx" ON "top_up_services" USING btree ("top_up_id");--> statement-breakpoint
CREATE UNIQUE INDEX "top_ups_slug_uq" ON "top_ups" USING btree ("slug");--> statement-breakpoint
CREATE INDEX "top_ups_category_idx" ON "top_ups" USING btree ("category_id");