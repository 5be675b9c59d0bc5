ALTER TABLE "generations" ADD COLUMN "source_conversation_ids" json;--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "claimed_by" text;--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "lease_until" text;--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "generations_status_idx" ON "generations" USING btree ("status");