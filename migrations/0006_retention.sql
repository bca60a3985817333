ALTER TABLE "card_services" ADD COLUMN "low_stock_alerts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "finished_at" timestamp(6) with time zone;--> statement-breakpoint
CREATE INDEX "auth_tokens_ended_idx" ON "auth_tokens" USING btree (least("expires_at", "revoked_at"));--> statement-breakpoint
CREATE INDEX "webhook_events_created_idx" ON "webhook_events" USING btree ("created_at","id");--> statement-breakpoint
-- Deliveries finished before this column: the time of their last attempt, or when they were delivered or created.
UPDATE "webhook_deliveries" d SET "finished_at" = coalesce(d."delivered_at", (SELECT max(a."created_at") FROM "webhook_attempts" a WHERE a."delivery_id" = d."id"), d."created_at") WHERE d."status" <> 'pending';--> statement-breakpoint
-- Alerts raised before the count was kept: the stock.low events still in the outbox.
UPDATE "card_services" s SET "low_stock_alerts" = (SELECT count(*) FROM "webhook_events" e WHERE e."account_id" IS NULL AND e."type" = 'stock.low' AND (e."data"->>'card_service_id')::int = s."id");
