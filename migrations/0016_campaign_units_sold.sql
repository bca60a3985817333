-- The units each campaign membership sold so far, counted before the ALTERs below lock the membership tables (one pass
-- over order_lines, which placement goes on writing meanwhile): every campaign unit of an order not refunded, and of a
-- refunded card order the campaign units it was delivered (its refund gave back only the others).
CREATE TEMP TABLE "campaign_units_sold" AS
SELECT l."campaign_id", l."card_service_id", l."top_up_service_id",
       sum(CASE WHEN o."status" <> 2 THEN l."campaign_units"
                ELSE least(l."campaign_units", (SELECT count(*) FROM "card_codes" c WHERE c."order_line_id" = l."id")) END)::int AS "units"
FROM "order_lines" l JOIN "orders" o ON o."id" = l."order_id"
WHERE l."campaign_id" IS NOT NULL AND o."livemode"
GROUP BY 1, 2, 3;--> statement-breakpoint
ALTER TABLE "campaign_card_services" ADD COLUMN "sold" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "campaign_top_up_services" ADD COLUMN "sold" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Not capped at max_sell: a campaign that started its count again from 0 may have sold past it, and a membership at or
-- past its cap no longer applies (its max_sell may only be raised above what it sold).
UPDATE "campaign_card_services" m SET "sold" = s."units"
FROM "campaign_units_sold" s
WHERE m."campaign_id" = s."campaign_id" AND m."card_service_id" = s."card_service_id";--> statement-breakpoint
UPDATE "campaign_top_up_services" m SET "sold" = s."units"
FROM "campaign_units_sold" s
WHERE m."campaign_id" = s."campaign_id" AND m."top_up_service_id" = s."top_up_service_id";--> statement-breakpoint
DROP TABLE "campaign_units_sold";--> statement-breakpoint
-- A service carrying its campaign counts at least what the campaign sold (at most its max_sell: the campaign sync then
-- takes it out at its cap, for good): before this release, a campaign paused (or overtaken) and applying again started
-- its count from 0.
UPDATE "card_services" s SET "offered_sell" = LEAST(m."sold", s."max_sell")
FROM "campaign_card_services" m
WHERE s."is_offered" = 1 AND m."campaign_id" = s."campaign_id" AND m."card_service_id" = s."id" AND s."offered_sell" < LEAST(m."sold", s."max_sell");--> statement-breakpoint
UPDATE "top_up_services" s SET "offered_sell" = LEAST(m."sold", s."max_sell")
FROM "campaign_top_up_services" m
WHERE s."is_offered" = 1 AND m."campaign_id" = s."campaign_id" AND m."top_up_service_id" = s."id" AND s."offered_sell" < LEAST(m."sold", s."max_sell");
