ALTER TABLE "campaign_card_services" ADD COLUMN "sold" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "campaign_top_up_services" ADD COLUMN "sold" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The units each membership sold so far, from the orders not refunded (a refunded order gave its units back), at most
-- its max_sell: a campaign that applies again takes up its count from here (C9).
UPDATE "campaign_card_services" m SET "sold" = LEAST(m."max_sell", s."units")
FROM (SELECT l."campaign_id", l."card_service_id", sum(l."campaign_units")::int AS "units"
      FROM "order_lines" l JOIN "orders" o ON o."id" = l."order_id"
      WHERE l."campaign_id" IS NOT NULL AND l."card_service_id" IS NOT NULL AND o."status" <> 2 AND o."livemode"
      GROUP BY 1, 2) s
WHERE m."campaign_id" = s."campaign_id" AND m."card_service_id" = s."card_service_id";--> statement-breakpoint
UPDATE "campaign_top_up_services" m SET "sold" = LEAST(m."max_sell", s."units")
FROM (SELECT l."campaign_id", l."top_up_service_id", sum(l."campaign_units")::int AS "units"
      FROM "order_lines" l JOIN "orders" o ON o."id" = l."order_id"
      WHERE l."campaign_id" IS NOT NULL AND l."top_up_service_id" IS NOT NULL AND o."status" <> 2 AND o."livemode"
      GROUP BY 1, 2) s
WHERE m."campaign_id" = s."campaign_id" AND m."top_up_service_id" = s."top_up_service_id";
