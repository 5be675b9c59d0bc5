ALTER TABLE "alignments" ADD COLUMN "lease_until" text;--> statement-breakpoint
ALTER TABLE "comparisons" ADD COLUMN "lease_until" text;