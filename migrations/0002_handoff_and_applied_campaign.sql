ALTER TABLE "card_services" ADD COLUMN "campaign_id" integer;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "delivery_attempts" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "awaiting_operator_since" timestamp(6) with time zone;--> statement-breakpoint
ALTER TABLE "top_up_services" ADD COLUMN "campaign_id" integer;--> statement-breakpoint
ALTER TABLE "card_services" ADD CONSTRAINT "card_services_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_services" ADD CONSTRAINT "top_up_services_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "orders_to_reconcile_idx" ON "orders" USING btree ("created_at","id") WHERE "orders"."status" = 0 and "orders"."awaiting_operator_since" is null;--> statement-breakpoint
-- Services already in a campaign record which one priced them (the latest started, then the higher id, C9).
UPDATE "card_services" s SET "campaign_id" = (
  SELECT m."campaign_id" FROM "campaign_card_services" m JOIN "campaigns" c ON c."id" = m."campaign_id"
  WHERE m."card_service_id" = s."id" AND m."left_at" IS NULL ORDER BY c."start_date" DESC, c."id" DESC LIMIT 1
) WHERE s."is_offered" = 1;--> statement-breakpoint
UPDATE "top_up_services" s SET "campaign_id" = (
  SELECT m."campaign_id" FROM "campaign_top_up_services" m JOIN "campaigns" c ON c."id" = m."campaign_id"
  WHERE m."top_up_service_id" = s."id" AND m."left_at" IS NULL ORDER BY c."start_date" DESC, c."id" DESC LIMIT 1
) WHERE s."is_offered" = 1;
