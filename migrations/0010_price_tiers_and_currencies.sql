CREATE TABLE "currencies" (
	"code" varchar(3) PRIMARY KEY NOT NULL,
	"rate" numeric(18, 8) NOT NULL,
	"symbol" varchar(8) NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "currencies_rate_ck" CHECK ("currencies"."rate" > 0)
);
--> statement-breakpoint
CREATE TABLE "price_tier_prices" (
	"tier_id" integer NOT NULL,
	"top_up_service_id" integer,
	"card_service_id" integer,
	"price" numeric(14, 2) NOT NULL,
	CONSTRAINT "price_tier_prices_one_service_ck" CHECK (("price_tier_prices"."top_up_service_id" is null) <> ("price_tier_prices"."card_service_id" is null)),
	CONSTRAINT "price_tier_prices_price_ck" CHECK ("price_tier_prices"."price" >= 0)
);
--> statement-breakpoint
CREATE TABLE "price_tiers" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "price_tiers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" varchar(100) NOT NULL,
	"percent_off" numeric(5, 2) DEFAULT '0' NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "price_tiers_percent_off_ck" CHECK ("price_tiers"."percent_off" >= 0 and "price_tiers"."percent_off" <= 100)
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "price_tier_id" integer;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "rate" numeric(18, 8);--> statement-breakpoint
ALTER TABLE "price_tier_prices" ADD CONSTRAINT "price_tier_prices_tier_id_price_tiers_id_fk" FOREIGN KEY ("tier_id") REFERENCES "public"."price_tiers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "price_tier_prices" ADD CONSTRAINT "price_tier_prices_top_up_service_id_top_up_services_id_fk" FOREIGN KEY ("top_up_service_id") REFERENCES "public"."top_up_services"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "price_tier_prices" ADD CONSTRAINT "price_tier_prices_card_service_id_card_services_id_fk" FOREIGN KEY ("card_service_id") REFERENCES "public"."card_services"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "price_tier_prices_top_up_uq" ON "price_tier_prices" USING btree ("tier_id","top_up_service_id");--> statement-breakpoint
CREATE UNIQUE INDEX "price_tier_prices_card_uq" ON "price_tier_prices" USING btree ("tier_id","card_service_id");--> statement-breakpoint
CREATE UNIQUE INDEX "price_tiers_name_uq" ON "price_tiers" USING btree ("name");--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_price_tier_id_price_tiers_id_fk" FOREIGN KEY ("price_tier_id") REFERENCES "public"."price_tiers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "accounts_price_tier_idx" ON "accounts" USING btree ("price_tier_id") WHERE "accounts"."price_tier_id" is not null;--> statement-breakpoint
CREATE INDEX "accounts_currency_idx" ON "accounts" USING btree ("currency");