CREATE TABLE "artifact_blobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"sha256" text NOT NULL,
	"bytes" bigint NOT NULL,
	"complete" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "artifact_blobs_bytes_positive" CHECK ("artifact_blobs"."bytes" > 0)
);
--> statement-breakpoint
CREATE TABLE "artifact_chunks" (
	"blob_id" uuid NOT NULL,
	"offset" bigint NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "artifact_chunks_blob_id_offset_pk" PRIMARY KEY("blob_id","offset")
);
--> statement-breakpoint
CREATE TABLE "artifact_uploads" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"owner_key" text NOT NULL,
	"sha256" text NOT NULL,
	"bytes" bigint NOT NULL,
	"received" bigint DEFAULT 0 NOT NULL,
	"state" text NOT NULL,
	"blob_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "artifact_uploads_received_bounded" CHECK ("artifact_uploads"."received" >= 0 and "artifact_uploads"."received" <= "artifact_uploads"."bytes"),
	CONSTRAINT "artifact_uploads_state" CHECK ("artifact_uploads"."state" in ('receiving', 'complete'))
);
--> statement-breakpoint
ALTER TABLE "artifact_chunks" ADD CONSTRAINT "artifact_chunks_blob_id_artifact_blobs_id_fk" FOREIGN KEY ("blob_id") REFERENCES "public"."artifact_blobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "artifact_uploads" ADD CONSTRAINT "artifact_uploads_blob_id_artifact_blobs_id_fk" FOREIGN KEY ("blob_id") REFERENCES "public"."artifact_blobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "artifact_blobs_complete_sha256_idx" ON "artifact_blobs" USING btree ("sha256") WHERE "artifact_blobs"."complete";--> statement-breakpoint
CREATE UNIQUE INDEX "artifact_uploads_owner_sha256_idx" ON "artifact_uploads" USING btree ("owner_key","sha256");--> statement-breakpoint
CREATE INDEX "artifact_uploads_expires_idx" ON "artifact_uploads" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "artifact_uploads_blob_idx" ON "artifact_uploads" USING btree ("blob_id");