ALTER TABLE "grants" ADD COLUMN "env" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "stdin_sha256" text;--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "cwd" text DEFAULT '.' NOT NULL;--> statement-breakpoint
CREATE INDEX "actions_token_state_idx" ON "actions" USING btree ("token_id","state");