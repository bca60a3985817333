ALTER TABLE "card_codes" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
-- The codes test orders were given (C25) are no stock: marked so, card_codes_taken_idx leaves them out. That index
-- (the newest code each card service has given out, where fulfilment starts its walk for free codes) is built after
-- the migrations, without holding back the writes of a large card_codes (src/db/migrate.ts).
UPDATE "card_codes" c SET "livemode" = false
FROM "order_lines" l JOIN "orders" o ON o."id" = l."order_id"
WHERE c."order_line_id" = l."id" AND NOT o."livemode";
