CREATE TABLE "actions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"channel" text NOT NULL,
	"caller_key" text NOT NULL,
	"session_id" text,
	"token_id" uuid,
	"admin_id" uuid,
	"operation" text NOT NULL,
	"capability_id" text NOT NULL,
	"host_id" uuid,
	"action_hash" text NOT NULL,
	"prepared" jsonb NOT NULL,
	"risk_level" text NOT NULL,
	"risk_reasons" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"state" text NOT NULL,
	"idempotency_key" text,
	"result" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "admin_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "admin_users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"username" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"disabled_at" timestamp with time zone,
	CONSTRAINT "admin_users_username_unique" UNIQUE("username")
);
--> statement-breakpoint
CREATE TABLE "agent_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"token_hash" "bytea" NOT NULL,
	"read_only" boolean DEFAULT false NOT NULL,
	"tools" text[],
	"hosts" text[],
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "agent_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "approvals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"action_id" uuid NOT NULL,
	"action_hash" text NOT NULL,
	"state" text NOT NULL,
	"requested_by" text NOT NULL,
	"risk_level" text NOT NULL,
	"deadline" timestamp with time zone NOT NULL,
	"decided_by" uuid,
	"decided_at" timestamp with time zone,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "approvals_action_id_unique" UNIQUE("action_id")
);
--> statement-breakpoint
CREATE TABLE "capabilities" (
	"id" text PRIMARY KEY NOT NULL,
	"manifest" jsonb NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "evidence" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"action_id" uuid NOT NULL,
	"job_id" uuid,
	"host_id" uuid NOT NULL,
	"envelope" jsonb NOT NULL,
	"envelope_sha256" text NOT NULL,
	"signature" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evidence_job_id_unique" UNIQUE("job_id")
);
--> statement-breakpoint
CREATE TABLE "grants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tool" text NOT NULL,
	"host" text NOT NULL,
	"argument_pattern" text,
	"max_risk" text NOT NULL,
	"uses_remaining" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_by" uuid,
	CONSTRAINT "grants_uses_nonnegative" CHECK ("grants"."uses_remaining" >= 0)
);
--> statement-breakpoint
CREATE TABLE "host_enrolment_codes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"code_hash" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"host_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "host_enrolment_codes_code_hash_unique" UNIQUE("code_hash")
);
--> statement-breakpoint
CREATE TABLE "host_request_nonces" (
	"host_id" uuid NOT NULL,
	"nonce" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "host_request_nonces_host_id_nonce_pk" PRIMARY KEY("host_id","nonce")
);
--> statement-breakpoint
CREATE TABLE "hosts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"public_key" text NOT NULL,
	"witness_key" text,
	"enforcement_tier" text,
	"health" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone,
	"removed_at" timestamp with time zone,
	CONSTRAINT "hosts_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "job_output_chunks" (
	"job_id" uuid NOT NULL,
	"stream" text NOT NULL,
	"seq" integer NOT NULL,
	"data" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "job_output_chunks_job_id_stream_seq_pk" PRIMARY KEY("job_id","stream","seq")
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"action_id" uuid NOT NULL,
	"host_id" uuid NOT NULL,
	"payload" jsonb NOT NULL,
	"signature" text NOT NULL,
	"state" text NOT NULL,
	"claimed_by" text,
	"claimed_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"result" jsonb,
	"heartbeat_at" timestamp with time zone,
	"deadline" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "jobs_action_id_unique" UNIQUE("action_id")
);
--> statement-breakpoint
CREATE TABLE "leases" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"host_id" uuid NOT NULL,
	"mode" text NOT NULL,
	"owner_kind" text NOT NULL,
	"owner_id" text NOT NULL,
	"session_id" text,
	"description" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"idle_expires_at" timestamp with time zone NOT NULL,
	"released_at" timestamp with time zone,
	"release_reason" text
);
--> statement-breakpoint
CREATE TABLE "ledger_checkpoints" (
	"tree_size" bigint PRIMARY KEY NOT NULL,
	"root_hash" "bytea" NOT NULL,
	"note" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_cosignatures" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tree_size" bigint NOT NULL,
	"witness_name" text NOT NULL,
	"witness_key_id" text NOT NULL,
	"signature_line" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"body" "bytea" NOT NULL,
	"leaf_index" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ledger_entries_leaf_index_unique" UNIQUE("leaf_index")
);
--> statement-breakpoint
CREATE TABLE "ledger_log" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"origin" text NOT NULL,
	"verifier_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ledger_log_singleton" CHECK ("ledger_log"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "ledger_nodes" (
	"level" smallint NOT NULL,
	"idx" bigint NOT NULL,
	"hash" "bytea" NOT NULL,
	CONSTRAINT "ledger_nodes_level_idx_pk" PRIMARY KEY("level","idx")
);
--> statement-breakpoint
CREATE TABLE "ledger_witnesses" (
	"key_id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"verifier_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"removed_at" timestamp with time zone,
	CONSTRAINT "ledger_witnesses_verifier_key_unique" UNIQUE("verifier_key")
);
--> statement-breakpoint
CREATE TABLE "mcp_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"token_id" uuid NOT NULL,
	"protocol_version" text NOT NULL,
	"client_info" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"client_capabilities" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "actions" ADD CONSTRAINT "actions_token_id_agent_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."agent_tokens"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "actions" ADD CONSTRAINT "actions_admin_id_admin_users_id_fk" FOREIGN KEY ("admin_id") REFERENCES "public"."admin_users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "actions" ADD CONSTRAINT "actions_host_id_hosts_id_fk" FOREIGN KEY ("host_id") REFERENCES "public"."hosts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "admin_sessions" ADD CONSTRAINT "admin_sessions_user_id_admin_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."admin_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_action_id_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."actions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_decided_by_admin_users_id_fk" FOREIGN KEY ("decided_by") REFERENCES "public"."admin_users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "evidence" ADD CONSTRAINT "evidence_action_id_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."actions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "evidence" ADD CONSTRAINT "evidence_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "evidence" ADD CONSTRAINT "evidence_host_id_hosts_id_fk" FOREIGN KEY ("host_id") REFERENCES "public"."hosts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "grants" ADD CONSTRAINT "grants_created_by_admin_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."admin_users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "grants" ADD CONSTRAINT "grants_revoked_by_admin_users_id_fk" FOREIGN KEY ("revoked_by") REFERENCES "public"."admin_users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "host_enrolment_codes" ADD CONSTRAINT "host_enrolment_codes_host_id_hosts_id_fk" FOREIGN KEY ("host_id") REFERENCES "public"."hosts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "host_request_nonces" ADD CONSTRAINT "host_request_nonces_host_id_hosts_id_fk" FOREIGN KEY ("host_id") REFERENCES "public"."hosts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_output_chunks" ADD CONSTRAINT "job_output_chunks_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_action_id_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."actions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_host_id_hosts_id_fk" FOREIGN KEY ("host_id") REFERENCES "public"."hosts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "leases" ADD CONSTRAINT "leases_host_id_hosts_id_fk" FOREIGN KEY ("host_id") REFERENCES "public"."hosts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_cosignatures" ADD CONSTRAINT "ledger_cosignatures_tree_size_ledger_checkpoints_tree_size_fk" FOREIGN KEY ("tree_size") REFERENCES "public"."ledger_checkpoints"("tree_size") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_sessions" ADD CONSTRAINT "mcp_sessions_token_id_agent_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."agent_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "actions_idempotency_idx" ON "actions" USING btree ("caller_key","idempotency_key");--> statement-breakpoint
CREATE INDEX "actions_state_idx" ON "actions" USING btree ("state");--> statement-breakpoint
CREATE INDEX "actions_host_idx" ON "actions" USING btree ("host_id");--> statement-breakpoint
CREATE INDEX "admin_sessions_user_idx" ON "admin_sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "approvals_state_deadline_idx" ON "approvals" USING btree ("state","deadline");--> statement-breakpoint
CREATE INDEX "grants_lookup_idx" ON "grants" USING btree ("tool","host");--> statement-breakpoint
CREATE INDEX "host_request_nonces_expiry_idx" ON "host_request_nonces" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "jobs_host_state_idx" ON "jobs" USING btree ("host_id","state","created_at");--> statement-breakpoint
CREATE INDEX "leases_host_active_idx" ON "leases" USING btree ("host_id","released_at");--> statement-breakpoint
CREATE INDEX "leases_session_idx" ON "leases" USING btree ("session_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_cosignatures_once_idx" ON "ledger_cosignatures" USING btree ("tree_size","witness_key_id");--> statement-breakpoint
CREATE INDEX "ledger_entries_pending_idx" ON "ledger_entries" USING btree ("id") WHERE "ledger_entries"."leaf_index" is null;--> statement-breakpoint
CREATE INDEX "mcp_sessions_token_idx" ON "mcp_sessions" USING btree ("token_id");--> statement-breakpoint
CREATE INDEX "mcp_sessions_expiry_idx" ON "mcp_sessions" USING btree ("expires_at");