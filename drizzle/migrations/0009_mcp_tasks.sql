CREATE TABLE "mcp_tasks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"token_id" uuid NOT NULL,
	"action_id" uuid,
	"tool" text NOT NULL,
	"replayed" boolean DEFAULT false NOT NULL,
	"result" jsonb,
	"ttl_ms" integer NOT NULL,
	"cancelled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "mcp_tasks_action_or_result" CHECK ("mcp_tasks"."action_id" is not null or "mcp_tasks"."result" is not null)
);
--> statement-breakpoint
ALTER TABLE "mcp_tasks" ADD CONSTRAINT "mcp_tasks_token_id_agent_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."agent_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_tasks" ADD CONSTRAINT "mcp_tasks_action_id_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."actions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mcp_tasks_token_idx" ON "mcp_tasks" USING btree ("token_id","created_at");--> statement-breakpoint
CREATE INDEX "mcp_tasks_expiry_idx" ON "mcp_tasks" USING btree ("expires_at");