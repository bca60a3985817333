-- C22 as amended: one delivery path. The TOPUP_PROVIDER=http sender becomes a provider row, written at start, whose
-- attempts are recorded like any other. What the old sender did was kept only as a count on the order, which no status
-- query can settle: an open top-up it may have delivered waits for an operator (who checks with the provider).
UPDATE "orders" SET "awaiting_operator_since" = now(), "updated_at" = now(),
  "note" = 'Sent by the TOPUP_PROVIDER=http sender of an earlier version, whose outcome was not recorded: check with the provider, then complete or refund.'
WHERE "kind" = 'top_up' AND "status" = 0 AND "awaiting_operator_since" IS NULL AND "delivery_attempts" > 0;--> statement-breakpoint
ALTER TABLE "orders" DROP COLUMN "delivery_attempts";--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "fields" json;--> statement-breakpoint
-- Open top-ups get their fields from the form as it is now (by label), in the form's order; settled ones need none.
UPDATE "orders" o SET "fields" = (
  SELECT json_agg(json_build_object('name', f.field->>'field_name', 'label', f.field->>'field_value',
                                    'type', f.field->>'field_type', 'value', o."informations"->>(f.field->>'field_value'))
                  ORDER BY f.position)
  FROM "top_ups" t
  CROSS JOIN LATERAL (
    SELECT e.value AS field, e.position FROM jsonb_array_elements(CASE WHEN jsonb_typeof(t."order_information") = 'array' THEN t."order_information" ELSE '[]'::jsonb END) WITH ORDINALITY AS e(value, position)
    UNION ALL
    SELECT e.value, e.key::bigint FROM jsonb_each(CASE WHEN jsonb_typeof(t."order_information") = 'object' THEN t."order_information" ELSE '{}'::jsonb END) AS e(key, value)
  ) f
  WHERE t."id" = o."top_up_id" AND o."informations" ? (f.field->>'field_value'))
WHERE o."kind" = 'top_up' AND o."status" = 0 AND o."informations" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD COLUMN "base_url" text;--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD COLUMN "destination" varchar(200);--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD COLUMN "timeout_ms" integer;--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD COLUMN "settled_by" varchar(8);--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD COLUMN "settle_reason" text;--> statement-breakpoint
-- An open attempt keeps asking where it was sent, with what it was sent: a Digiflazz status query sends the transaction
-- again, so its customer_no stays the one the previous version made (a field customer_no, else every value of the
-- order's informations in their stored order). Settled attempts are never asked again.
UPDATE "provider_attempts" a SET "base_url" = p."base_url", "timeout_ms" = p."timeout_ms",
  "destination" = CASE WHEN p."kind" = 'digiflazz' THEN (
    SELECT coalesce(o."informations"->>'customer_no', string_agg(e.value, '' ORDER BY e.position))
    FROM "orders" o LEFT JOIN LATERAL jsonb_each_text(o."informations") WITH ORDINALITY AS e(key, value, position) ON true
    WHERE o."id" = a."order_id" GROUP BY o."informations") END
FROM "providers" p
WHERE p."id" = a."provider_id" AND a."outcome" IN ('sending', 'pending', 'unknown');--> statement-breakpoint
ALTER TABLE "providers" ADD COLUMN "from_environment" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "top_up_routes" ADD COLUMN "destination" varchar(200);--> statement-breakpoint
CREATE UNIQUE INDEX "providers_environment_uq" ON "providers" USING btree ("from_environment") WHERE "providers"."from_environment";--> statement-breakpoint
ALTER TABLE "order_lines" ADD COLUMN "waiting" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Lines of orders waiting stock_short wait for their codes; order_lines_waiting_idx is built after the migrations,
-- without holding back writes (src/db/migrate.ts).
UPDATE "order_lines" l SET "waiting" = true FROM "orders" o
WHERE o."id" = l."order_id" AND o."status" = 3 AND l."codes_owed" > 0;--> statement-breakpoint
-- NOT VALID: new rows are checked at once, the existing ones by VALIDATE after the migrations (src/db/migrate.ts),
-- which scans the table without holding back its writes.
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_codes_owed_ck" CHECK ("order_lines"."codes_owed" >= 0) NOT VALID;--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD CONSTRAINT "provider_attempts_settled_by_ck" CHECK ("provider_attempts"."settled_by" in ('provider', 'operator'));
