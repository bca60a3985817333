ALTER TABLE "top_up_services" ADD COLUMN "routes_set_at" timestamp(6) with time zone;--> statement-breakpoint
-- A service that has routes had them set by an operator. One without keeps its implicit route: until now an empty list
-- could not be told from a list never set.
UPDATE "top_up_services" s SET "routes_set_at" = now() WHERE EXISTS (SELECT 1 FROM "top_up_routes" r WHERE r."top_up_service_id" = s."id");
