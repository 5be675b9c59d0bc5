/**
 * The HTTP side of the OTLP trace receiver: which encoding a request uses, its body read within
 * OTEL_MAX_BODY_BYTES (as sent and after gunzip), and the response in the request's own encoding.
 */
import { gunzipSync } from "node:zlib";
import { AppError } from "@/lib/errors";

export type OtlpEncoding = "protobuf" | "json";

/** The request's encoding from its Content-Type; 415 for anything but OTLP protobuf or JSON. */
export function otlpEncoding(req: Request): OtlpEncoding {
  const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type === "application/x-protobuf" || type === "application/protobuf") return "protobuf";
  if (type === "application/json") return "json";
  throw new AppError(
    "unsupported_media_type",
    `Content-Type ${type ? `'${type}'` : "(none)"} is not an OTLP encoding: send application/x-protobuf or application/json`,
  );
}

const tooLarge = (max: number) =>
  new AppError("payload_too_large", `The export is larger than OTEL_MAX_BODY_BYTES (${max} bytes): export smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE) or raise the limit`);

/** The body, read up to `max` bytes and gunzipped when `Content-Encoding: gzip`. */
export async function readOtlpBody(req: Request, max: number): Promise<Uint8Array> {
  const encoding = (req.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding !== "gzip" && encoding !== "identity" && encoding !== "") {
    throw new AppError("unsupported_media_type", `Content-Encoding '${encoding}' is not supported: send gzip or no encoding`);
  }
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > max) throw tooLarge(max);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    const reader = req.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(max);
      }
      chunks.push(value);
    }
  }
  const body = Buffer.concat(chunks, size);
  if (encoding !== "gzip") return body;
  try {
    return gunzipSync(body, { maxOutputLength: max });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError) throw tooLarge(max);
    throw new AppError("bad_request", `The body is not valid gzip: ${(error as Error).message}`);
  }
}

/** The export response in the request's encoding. */
export function otlpResponse(encoding: OtlpEncoding, body: Uint8Array | string): Response {
  return new Response(typeof body === "string" ? body : Buffer.from(body), {
    status: 200,
    headers: { "content-type": encoding === "json" ? "application/json" : "application/x-protobuf" },
  });
}
