import { route } from "@/lib/api/route";
import { decodeOtlpExport, otlpEncoding, otlpResponse, readOtlpBody } from "@/lib/api/otlp";
import { getConfig } from "@/lib/config";
import { encodeExportResponse } from "@/lib/otel/decode";
import { ingestExport } from "@/lib/otel/ingest";

export const dynamic = "force-dynamic";

/** OTLP/HTTP trace export (OTEL_EXPORTER_OTLP_ENDPOINT=<base>/api/otel): spans in, conversations rebuilt from them. */
export const POST = route({
  handler: async ({ req, userId }) => {
    const encoding = otlpEncoding(req);
    // Only bytes move here: gunzip, parsing and reading the spans are on the input pool (lib/input-pool.ts).
    const decoded = await decodeOtlpExport(encoding, await readOtlpBody(req, getConfig().OTEL_MAX_BODY_BYTES));
    const outcome = await ingestExport(userId, decoded);
    const partial = outcome.rejected > 0 ? { rejectedSpans: outcome.rejected, errorMessage: outcome.errorMessage ?? "" } : undefined;
    return otlpResponse(encoding, encodeExportResponse(encoding, partial));
  },
});
