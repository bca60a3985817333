CREATE TABLE "installation" (
	"name" varchar(60) PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp(6) with time zone DEFAULT now() NOT NULL
);
