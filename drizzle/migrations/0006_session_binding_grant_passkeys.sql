ALTER TABLE "admin_sessions" ADD COLUMN "binding_hash" text;--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "assertion" jsonb;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD COLUMN "registered_from" text;--> statement-breakpoint
ALTER TABLE "oauth_tokens" ADD COLUMN "scopes" text[];