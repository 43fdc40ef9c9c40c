CREATE TABLE "hub_identity" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"job_key_id" text NOT NULL,
	"job_public_key" text NOT NULL,
	"log_origin" text NOT NULL,
	"log_verifier" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "hub_identity_singleton" CHECK ("hub_identity"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "limit_buckets" (
	"key" text PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"refilled_at" timestamp with time zone NOT NULL,
	"taken" boolean NOT NULL
);
--> statement-breakpoint
CREATE TABLE "limit_holders" (
	"holder" text PRIMARY KEY NOT NULL,
	"renewed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "limit_in_flight" (
	"key" text PRIMARY KEY NOT NULL,
	"total" integer NOT NULL,
	"holders" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "limit_windows" (
	"key" text PRIMARY KEY NOT NULL,
	"count" integer NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "limit_buckets_refilled_idx" ON "limit_buckets" USING btree ("refilled_at");--> statement-breakpoint
CREATE INDEX "limit_holders_renewed_idx" ON "limit_holders" USING btree ("renewed_at");--> statement-breakpoint
CREATE INDEX "limit_windows_expires_idx" ON "limit_windows" USING btree ("expires_at");