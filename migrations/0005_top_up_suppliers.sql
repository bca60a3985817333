CREATE TABLE "provider_attempts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "provider_attempts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"order_id" bigint NOT NULL,
	"provider_id" integer NOT NULL,
	"product_code" varchar(100) NOT NULL,
	"cost" numeric(14, 2),
	"outcome" varchar(10) DEFAULT 'sending' NOT NULL,
	"provider_reference" varchar(200),
	"detail" text,
	"status_queries" smallint DEFAULT 0 NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"settled_at" timestamp(6) with time zone,
	CONSTRAINT "provider_attempts_outcome_ck" CHECK ("provider_attempts"."outcome" in ('sending', 'pending', 'unknown', 'completed', 'refused'))
);
--> statement-breakpoint
CREATE TABLE "providers" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "providers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" varchar(100) NOT NULL,
	"kind" varchar(16) NOT NULL,
	"base_url" text NOT NULL,
	"credentials_sealed" "bytea" NOT NULL,
	"timeout_ms" integer DEFAULT 10000 NOT NULL,
	"status" varchar(8) DEFAULT 'active' NOT NULL,
	"balance_low_threshold" numeric(14, 2),
	"balance" numeric(14, 2),
	"balance_checked_at" timestamp(6) with time zone,
	"balance_low_alerted" boolean DEFAULT false NOT NULL,
	"circuit_open_until" timestamp(6) with time zone,
	"last_error" text,
	"last_error_at" timestamp(6) with time zone,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "providers_kind_ck" CHECK ("providers"."kind" in ('http', 'digiflazz')),
	CONSTRAINT "providers_status_ck" CHECK ("providers"."status" in ('active', 'disabled')),
	CONSTRAINT "providers_timeout_ck" CHECK ("providers"."timeout_ms" between 100 and 120000)
);
--> statement-breakpoint
CREATE TABLE "top_up_routes" (
	"top_up_service_id" integer NOT NULL,
	"position" smallint NOT NULL,
	"provider_id" integer NOT NULL,
	"product_code" varchar(100) NOT NULL,
	"cost" numeric(14, 2),
	CONSTRAINT "top_up_routes_top_up_service_id_position_pk" PRIMARY KEY("top_up_service_id","position")
);
--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "routing_step" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD CONSTRAINT "provider_attempts_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_attempts" ADD CONSTRAINT "provider_attempts_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."providers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_routes" ADD CONSTRAINT "top_up_routes_top_up_service_id_top_up_services_id_fk" FOREIGN KEY ("top_up_service_id") REFERENCES "public"."top_up_services"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "top_up_routes" ADD CONSTRAINT "top_up_routes_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."providers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "provider_attempts_order_idx" ON "provider_attempts" USING btree ("order_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "provider_attempts_open_uq" ON "provider_attempts" USING btree ("order_id") WHERE "provider_attempts"."outcome" in ('sending', 'pending', 'unknown');--> statement-breakpoint
CREATE UNIQUE INDEX "provider_attempts_provider_uq" ON "provider_attempts" USING btree ("order_id","provider_id");--> statement-breakpoint
CREATE INDEX "provider_attempts_open_idx" ON "provider_attempts" USING btree ("provider_id") WHERE "provider_attempts"."outcome" in ('sending', 'pending', 'unknown');--> statement-breakpoint
CREATE INDEX "provider_attempts_completed_idx" ON "provider_attempts" USING btree ("settled_at") WHERE "provider_attempts"."outcome" = 'completed';--> statement-breakpoint
CREATE UNIQUE INDEX "providers_name_uq" ON "providers" USING btree (lower("name"));--> statement-breakpoint
CREATE UNIQUE INDEX "top_up_routes_provider_uq" ON "top_up_routes" USING btree ("top_up_service_id","provider_id");--> statement-breakpoint
CREATE INDEX "top_up_routes_provider_idx" ON "top_up_routes" USING btree ("provider_id");