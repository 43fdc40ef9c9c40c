ALTER TABLE "leases" ADD COLUMN "label" text;--> statement-breakpoint
CREATE UNIQUE INDEX "leases_active_label_uq" ON "leases" USING btree ("host_id","label") WHERE "leases"."released_at" is null and "leases"."label" is not null;--> statement-breakpoint
ALTER TABLE "leases" ADD CONSTRAINT "leases_label_exclusive" CHECK ("leases"."label" is null or "leases"."mode" = 'exclusive');