CREATE UNIQUE INDEX "otel_spans_dataset_trace_span_idx" ON "otel_spans" USING btree ("dataset_id","trace_id","span_id");--> statement-breakpoint
DROP INDEX "otel_spans_trace_span_idx";--> statement-breakpoint
DROP INDEX "otel_spans_dataset_trace_idx";