import { route } from "@/lib/api/route";
import { ingestOtlpExport, otlpEncoding, otlpResponse, readOtlpBody } from "@/lib/api/otlp";
import { getConfig } from "@/lib/config";
import { encodeExportResponse } from "@/lib/otel/decode";
import { exportInFlight } from "@/lib/otel/ingest";

export const dynamic = "force-dynamic";

/** OTLP/HTTP trace export (OTEL_EXPORTER_OTLP_ENDPOINT=<base>/api/otel): spans in, conversations rebuilt from them. */
export const POST = route({
  // In flight from here to its answer: the rebuild of conversations on this loop lets it go first (lib/otel/ingest.ts).
  handler: ({ req, userId }) =>
    exportInFlight(async () => {
      const encoding = otlpEncoding(req);
      // Only bytes move here: gunzip, parsing, reading the spans and (on SQLite) storing them are on the input pool (lib/input-pool.ts).
      const outcome = await ingestOtlpExport(userId, encoding, await readOtlpBody(req, getConfig().OTEL_MAX_BODY_BYTES));
      const partial = outcome.rejected > 0 ? { rejectedSpans: outcome.rejected, errorMessage: outcome.errorMessage ?? "" } : undefined;
      return otlpResponse(encoding, encodeExportResponse(encoding, partial));
    }),
});
