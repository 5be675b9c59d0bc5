/**
 * The HTTP side of the OTLP trace receiver: which encoding a request uses, its body read within
 * OTEL_MAX_BODY_BYTES as sent, decoded (gunzip within the same limit, JSON nesting bounded, spans read)
 * and stored, and the response in the request's own encoding. On SQLite an input-pool thread does both,
 * with a connection of its own (lib/otel/store-export.ts): the request loop only moves bytes, and the
 * run in progress and the ingest share SQLite's one writer without the loop waiting for it. On
 * PostgreSQL the pool decodes (unless the body is small) and the loop stores: the store is a server.
 */
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { runOffLoop } from "@/lib/input-pool";
import { log } from "@/lib/log";
import { decodeExportBody, exportTooLarge, gunzipExport, type DecodedExport, type ExportBody } from "@/lib/otel/decode";
import { inboxHasRoom, spooled } from "@/lib/otel/inbox";
import { ingestedOffLoop, ingestExport, threadStore, type IngestOutcome } from "@/lib/otel/ingest";
import { inboxDir, type IngestTask, type SpooledExport, type SpoolTask, type StoredExport } from "@/lib/otel/store-export";

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

/** The body as sent, read up to `max` bytes; `gzip` when `Content-Encoding: gzip` (it is gunzipped with the decoding). */
export async function readOtlpBody(req: Request, max: number): Promise<{ bytes: Uint8Array; gzip: boolean }> {
  const encoding = (req.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding !== "gzip" && encoding !== "identity" && encoding !== "") {
    throw new AppError("unsupported_media_type", `Content-Encoding '${encoding}' is not supported: send gzip or no encoding`);
  }
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > max) throw exportTooLarge(max);
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
        throw exportTooLarge(max);
      }
      chunks.push(value);
    }
  }
  return { bytes: Buffer.concat(chunks, size), gzip: encoding === "gzip" };
}

/**
 * Bodies up to this many bytes (gunzipped) are decoded in process: a few milliseconds at most, less
 * than a trip to a thread. An SDK's batch of 512 spans is larger and goes to the pool.
 */
export const OTLP_INLINE_BYTES = 64 * 1024;

/**
 * The export's spans: decoded here when small, else on the input pool within OTEL_DECODE_TIMEOUT_MS.
 * A small gzip body is gunzipped here only as far as OTLP_INLINE_BYTES; one that inflates past that
 * goes to the pool compressed, so no body inflates on the request loop.
 */
export async function decodeOtlpExport(encoding: OtlpEncoding, body: { bytes: Uint8Array; gzip: boolean }): Promise<DecodedExport> {
  const config = getConfig();
  const input: ExportBody = { bytes: body.bytes, encoding, gzip: body.gzip, maxBytes: config.OTEL_MAX_BODY_BYTES, maxDepth: config.MAX_JSON_DEPTH };
  if (body.bytes.length <= OTLP_INLINE_BYTES) {
    if (!body.gzip) return decodeExportBody(input);
    let small: Uint8Array | undefined;
    try {
      small = gunzipExport(body.bytes, Math.min(OTLP_INLINE_BYTES, config.OTEL_MAX_BODY_BYTES));
    } catch (error) {
      // Past the small size: the pool gunzips it within the real limit (and refuses what is not gzip alike).
      if (!(error instanceof AppError && error.code === "payload_too_large" && OTLP_INLINE_BYTES < config.OTEL_MAX_BODY_BYTES)) throw error;
    }
    if (small) return decodeExportBody({ ...input, bytes: small, gzip: false });
  }
  return runOffLoop<DecodedExport>(
    "decodeOtlp",
    input,
    { ms: config.OTEL_DECODE_TIMEOUT_MS, setting: "OTEL_DECODE_TIMEOUT_MS", what: "Decoding the export" },
    () => decodeExportBody(input),
  );
}

/**
 * Decode and store an export for `userId`. On SQLite on the input pool: decoded within OTEL_DECODE_TIMEOUT_MS
 * and put in the trace inbox (lib/otel/inbox.ts), its spans stored in the background; past
 * OTEL_INBOX_MAX_BYTES (or with it 0) decoded and stored before the answer, as long as SQLite's writer takes.
 * Elsewhere decoded by `decodeOtlpExport` and stored here. Either way the conversations it touched are
 * rebuilt later, on this process.
 */
export async function ingestOtlpExport(userId: string, encoding: OtlpEncoding, body: { bytes: Uint8Array; gzip: boolean }): Promise<IngestOutcome> {
  const store = await threadStore();
  if (!store) return ingestExport(userId, await decodeOtlpExport(encoding, body));
  const config = getConfig();
  const input: ExportBody = { bytes: body.bytes, encoding, gzip: body.gzip, maxBytes: config.OTEL_MAX_BODY_BYTES, maxDepth: config.MAX_JSON_DEPTH };
  const dir = inboxDir(store.file);
  if (inboxHasRoom(dir, body.bytes.length)) {
    const spool: SpoolTask = { body: input, userId, dir };
    const result = await runOffLoop<SpooledExport | Promise<IngestOutcome>>(
      "spoolOtlp",
      spool,
      { ms: config.OTEL_DECODE_TIMEOUT_MS, setting: "OTEL_DECODE_TIMEOUT_MS", what: "Decoding the export" },
      // Where threads cannot start: decoded and stored here, as on PostgreSQL.
      () => ingestExport(userId, decodeExportBody(input)),
    );
    if (!("bytes" in result)) return result;
    if (result.file) spooled(dir, store, result.bytes);
    // The spans are taken: stored shortly (a retry's known spans are skipped then, not counted here).
    if (!result.unwritten) return { accepted: result.spans, duplicates: 0, rejected: result.rejected, ...(result.errorMessage ? { errorMessage: result.errorMessage } : {}) };
    // The inbox could not take it (a full disk): stored before the answer instead.
    log.warn("the trace inbox could not take an export; storing it before answering", { reason: result.unwritten.slice(0, 200) });
  }
  const task: IngestTask = { body: input, userId, store, compress: config.OTEL_SPAN_COMPRESSION === "on" };
  const stored = await runOffLoop<StoredExport | Promise<IngestOutcome>>(
    "ingestOtlp",
    task,
    { ms: config.OTEL_DECODE_TIMEOUT_MS, setting: "OTEL_DECODE_TIMEOUT_MS", what: "Decoding the export" },
    // Where threads cannot start: decoded and stored here, as on PostgreSQL.
    () => ingestExport(userId, decodeExportBody(input)),
  );
  return "conversationIds" in stored ? ingestedOffLoop(stored) : stored;
}

/** The export response in the request's encoding. */
export function otlpResponse(encoding: OtlpEncoding, body: Uint8Array | string): Response {
  return new Response(typeof body === "string" ? body : Buffer.from(body), {
    status: 200,
    headers: { "content-type": encoding === "json" ? "application/json" : "application/x-protobuf" },
  });
}
