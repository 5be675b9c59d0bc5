import { route } from "@/lib/api/route";
import { otlpEncoding, otlpResponse, readOtlpBody } from "@/lib/api/otlp";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { decodeJsonExport, decodeProtobufExport, encodeExportResponse, TooManySpans, UnreadableExport } from "@/lib/otel/decode";
import { ingestExport } from "@/lib/otel/ingest";

export const dynamic = "force-dynamic";

/** OTLP/HTTP trace export (OTEL_EXPORTER_OTLP_ENDPOINT=<base>/api/otel): spans in, conversations rebuilt from them. */
export const POST = route({
  handler: async ({ req, userId }) => {
    const encoding = otlpEncoding(req);
    const body = await readOtlpBody(req, getConfig().OTEL_MAX_BODY_BYTES);
    let decoded;
    try {
      decoded = encoding === "json" ? decodeJsonExport(new TextDecoder("utf-8", { fatal: true }).decode(body)) : decodeProtobufExport(body);
    } catch (error) {
      if (error instanceof UnreadableExport) throw new AppError("bad_request", error.message);
      if (error instanceof TooManySpans) throw new AppError("payload_too_large", error.message);
      if (error instanceof TypeError) throw new AppError("bad_request", "The body is not valid UTF-8");
      throw error;
    }
    const outcome = await ingestExport(userId, decoded);
    const partial = outcome.rejected > 0 ? { rejectedSpans: outcome.rejected, errorMessage: outcome.errorMessage ?? "" } : undefined;
    return otlpResponse(encoding, encodeExportResponse(encoding, partial));
  },
});
