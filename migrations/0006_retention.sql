ALTER TABLE "card_services" ADD COLUMN "low_stock_alerts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "finished_at" timestamp(6) with time zone;
-- Both columns are added without rewriting their tables. Deliveries that finished before `finished_at` count from
-- their last attempt (retention reads it so), and the stock.low count starts at the upgrade (Prometheus reads the
-- drop as a counter reset). auth_tokens_ended_idx and webhook_events_created_idx, declared in schema.ts, are built
-- after the migrations with CREATE INDEX CONCURRENTLY (src/db/migrate.ts), so that writes go on meanwhile.
