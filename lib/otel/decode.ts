/**
 * OTLP/HTTP trace export bodies → spans. Protobuf is decoded by protobufjs with the OTLP .proto
 * definitions shipped in lib/otel/proto; OTLP JSON (lowerCamelCase keys, hex ids, enums as integers,
 * int64 as decimal strings) is read by the same normaliser. A span without valid ids is rejected and
 * counted (the response's `partialSuccess`), the others go on. Pure: no I/O besides reading the .proto
 * files once.
 */
import path from "node:path";
import { gunzipSync } from "node:zlib";
import protobuf from "protobufjs";
import { AppError } from "@/lib/errors";
import { findExcessiveNesting } from "@/lib/import/json-syntax";
import { readProtobufExport } from "./decode-wire";
import type { AttrValue, Attributes, OtelEvent, OtelSpan } from "./types";

/** `errors` holds the first MAX_ERRORS reasons only; `rejected` counts every rejected span. */
export type DecodedExport = { spans: OtelSpan[]; rejected: number; errors: string[] };

/**
 * Reasons kept per export: the response names a few, and a 15 KB gzip body of 8 million rejected spans
 * built one string each (1.2 GB, the server held 19 s).
 */
export const MAX_ERRORS = 5;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

let types: { request: protobuf.Type; response: protobuf.Type } | undefined;

/** The export request and response types, loaded once from the shipped .proto files. */
function protoTypes(): { request: protobuf.Type; response: protobuf.Type } {
  if (types) return types;
  // `next start` and the test runners both run from the project root (as db/sqlite-database.ts finds its migrations).
  const dir = path.join(process.cwd(), "lib", "otel", "proto");
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(dir, target));
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", { keepCase: false });
  types = {
    request: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"),
    response: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse"),
  };
  return types;
}

/** Thrown for a body that is not an export request at all (the route answers 400). */
export class UnreadableExport extends Error {}

/**
 * Most spans one export may hold, counted before any span is read: an SDK sends batches of 512, a
 * collector a few thousand. 16 MiB of two-byte empty spans is 8 million of them (7.8 s and 1 GB to
 * decode); refused at once instead (the route answers 413).
 */
export const MAX_SPANS_PER_EXPORT = 50_000;

export class TooManySpans extends Error {
  constructor() {
    super(`The export holds more than ${MAX_SPANS_PER_EXPORT} spans: export smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)`);
  }
}

/**
 * Spans in a protobuf export, counted from the wire without decoding them: the length-delimited fields
 * resource_spans (1) → scope_spans (2) → spans (2), every other field skipped. Stops past the limit.
 */
function countProtobufSpans(bytes: Uint8Array): number {
  let count = 0;
  const walk = (start: number, end: number, level: number) => {
    const reader = protobuf.Reader.create(bytes.subarray(start, end));
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      const fieldNo = tag >>> 3;
      const wire = tag & 7;
      const wanted = level === 0 ? 1 : 2;
      if (wire === 2 && fieldNo === wanted) {
        const length = reader.uint32();
        if (level === 2) count++;
        else walk(start + reader.pos, start + reader.pos + length, level + 1);
        reader.skip(length);
        if (count > MAX_SPANS_PER_EXPORT) return;
      } else reader.skipType(wire);
    }
  };
  walk(0, bytes.length, 0);
  return count;
}

/** Spans in a parsed OTLP JSON export, counted without reading them. */
function countJsonSpans(request: Obj): number {
  let count = 0;
  for (const rs of list(field(request, "resourceSpans"))) {
    if (!isObj(rs)) continue;
    for (const ss of list(field(rs, "scopeSpans"))) if (isObj(ss)) count += list(ss.spans).length;
  }
  return count;
}
/** Decode a protobuf `ExportTraceServiceRequest`. */
export function decodeProtobufExport(bytes: Uint8Array): DecodedExport {
  countSpansWithin(bytes);
  // Straight from the wire (decode-wire.ts, ~3× less CPU a span); a body it leaves (malformed, or odd in a
  // way protobufjs decides) is decoded by protobufjs as before, so both give the same spans and the same errors.
  return readProtobufExport(bytes, MAX_ERRORS) ?? decodeWithProtobufjs(bytes);
}

/** Refuse a body of more than MAX_SPANS_PER_EXPORT spans (413), or one whose spans cannot even be counted (400). */
function countSpansWithin(bytes: Uint8Array): void {
  try {
    if (countProtobufSpans(bytes) > MAX_SPANS_PER_EXPORT) throw new TooManySpans();
  } catch (error) {
    if (error instanceof TooManySpans) throw error;
    throw new UnreadableExport(`Not an OTLP protobuf ExportTraceServiceRequest: ${(error as Error).message}`);
  }
}

/**
 * The export decoded by protobufjs, its message copied by `toObject` and read by the normaliser: the path for
 * the bodies decode-wire.ts leaves, and the reference lib/otel/decode-equivalence.test.ts holds it to.
 */
export function decodeProtobufExportWithProtobufjs(bytes: Uint8Array): DecodedExport {
  countSpansWithin(bytes);
  return decodeWithProtobufjs(bytes);
}

function decodeWithProtobufjs(bytes: Uint8Array): DecodedExport {
  const { request } = protoTypes();
  let message: protobuf.Message;
  try {
    message = request.decode(bytes);
  } catch (error) {
    throw new UnreadableExport(`Not an OTLP protobuf ExportTraceServiceRequest: ${(error as Error).message}`);
  }
  // int64/fixed64 as decimal strings (nanosecond times exceed 2^53); bytes stay bytes; oneofs as set.
  const object = request.toObject(message, { longs: String, enums: Number, defaults: false, oneofs: false });
  return readExport(object);
}

/** Decode an OTLP JSON `ExportTraceServiceRequest` (already UTF-8 text). */
export function decodeJsonExport(text: string): DecodedExport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UnreadableExport(`Body is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObj(value)) throw new UnreadableExport("An OTLP JSON export is an object with `resourceSpans`");
  if (countJsonSpans(value) > MAX_SPANS_PER_EXPORT) throw new TooManySpans();
  return readExport(value);
}

/** The export response, encoded for the request's content type. */
export function encodeExportResponse(kind: "protobuf" | "json", partial?: { rejectedSpans: number; errorMessage: string }): Uint8Array | string {
  if (kind === "json") return JSON.stringify(partial ? { partialSuccess: { rejectedSpans: partial.rejectedSpans, errorMessage: partial.errorMessage } } : {});
  const { response } = protoTypes();
  const payload = partial ? { partialSuccess: { rejectedSpans: partial.rejectedSpans, errorMessage: partial.errorMessage } } : {};
  return response.encode(response.fromObject(payload)).finish();
}

/** Decode an export response (used by tests to read what the receiver answered). */
export function decodeProtobufResponse(bytes: Uint8Array): Obj {
  const { response } = protoTypes();
  return response.toObject(response.decode(bytes), { longs: Number, defaults: false }) as Obj;
}

/** A field under its lowerCamelCase name or its proto (snake_case) name: OTLP JSON receivers take both. */
function field(obj: Obj, camel: string): unknown {
  if (camel in obj) return obj[camel];
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return obj[snake];
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const hexPattern = /^[0-9a-fA-F]+$/;

/** An id as lowercase hex: from bytes (protobuf) or hex text (OTLP JSON); undefined when absent or malformed. */
function idOf(value: unknown, length: number): string | undefined {
  let hex: string | undefined;
  if (value instanceof Uint8Array) hex = Buffer.from(value).toString("hex");
  else if (typeof value === "string") hex = hexPattern.test(value) ? value.toLowerCase() : undefined;
  if (!hex || hex.length !== length || /^0+$/.test(hex)) return undefined;
  return hex;
}

/** A fixed64/int64 as a 19-digit decimal string; "0…0" when absent or unreadable. */
function nanos(value: unknown): string {
  let text = "0";
  if (typeof value === "string" && /^\d+$/.test(value)) text = value.replace(/^0+(?=\d)/, "");
  else if (typeof value === "number" && Number.isFinite(value) && value >= 0) text = BigInt(Math.trunc(value)).toString();
  else if (typeof value === "bigint" && value >= BigInt(0)) text = value.toString();
  // Beyond 19 digits is past the year 2286: not a time a span can have, so it reads as unknown.
  return text.length > 19 ? "0".repeat(19) : text.padStart(19, "0");
}

/** Text as stored: without NUL characters, which PostgreSQL text cannot hold. */
const clean = (s: string): string => (s.includes("\u0000") ? s.replaceAll("\u0000", "") : s);

/** An integer from OTLP JSON (a number or a decimal string) as a number, or the string when beyond 2^53. */
function intValue(value: unknown): AttrValue {
  if (typeof value === "number") return value;
  if (typeof value === "string" && /^-?\d+$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  return null;
}

function enumValue(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    const known: Record<string, number> = {
      SPAN_KIND_UNSPECIFIED: 0, SPAN_KIND_INTERNAL: 1, SPAN_KIND_SERVER: 2, SPAN_KIND_CLIENT: 3, SPAN_KIND_PRODUCER: 4, SPAN_KIND_CONSUMER: 5,
      STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2,
    };
    if (value in known) return known[value];
    if (/^\d+$/.test(value)) return Number(value);
  }
  return 0;
}

/** OTLP AnyValue → plain JSON. */
export function anyValue(value: unknown, depth = 0): AttrValue {
  if (!isObj(value) || depth > 32) return null;
  const s = field(value, "stringValue");
  if (typeof s === "string") return clean(s);
  const b = field(value, "boolValue");
  if (typeof b === "boolean") return b;
  const i = field(value, "intValue");
  if (i !== undefined && i !== null) return intValue(i);
  const d = field(value, "doubleValue");
  if (typeof d === "number") return d;
  if (typeof d === "string") return Number(d); // "NaN", "Infinity" in OTLP JSON
  const arr = field(value, "arrayValue");
  if (isObj(arr)) return list(arr.values).map((v) => anyValue(v, depth + 1));
  const kv = field(value, "kvlistValue");
  if (isObj(kv)) return attributesOf(kv.values, depth + 1);
  const bytes = field(value, "bytesValue");
  if (bytes instanceof Uint8Array) return Buffer.from(bytes).toString("base64");
  if (typeof bytes === "string") return bytes;
  return null;
}

/** A KeyValue list → an object (a repeated key keeps its last value). */
export function attributesOf(values: unknown, depth = 0): Attributes {
  const out: Attributes = {};
  for (const kv of list(values)) {
    if (!isObj(kv) || typeof kv.key !== "string") continue;
    const key = clean(kv.key);
    // An own property even for "__proto__", which plain assignment would take as the object's prototype.
    if (key === "__proto__") Object.defineProperty(out, key, { value: anyValue(kv.value, depth), enumerable: true, writable: true, configurable: true });
    else out[key] = anyValue(kv.value, depth);
  }
  return out;
}

function readEvent(event: unknown): OtelEvent | undefined {
  if (!isObj(event)) return undefined;
  return { name: typeof event.name === "string" ? clean(event.name) : "", timeNs: nanos(field(event, "timeUnixNano")), attributes: attributesOf(event.attributes) };
}

/** Every span of a decoded request (protobuf toObject output or OTLP JSON), validated one by one. */
function readExport(request: Obj): DecodedExport {
  const resourceSpans = field(request, "resourceSpans");
  if (resourceSpans !== undefined && !Array.isArray(resourceSpans)) throw new UnreadableExport("`resourceSpans` must be an array");
  const spans: OtelSpan[] = [];
  const errors: string[] = [];
  let rejected = 0;
  const reject = (why: () => string) => {
    rejected++;
    if (errors.length < MAX_ERRORS) errors.push(why());
  };
  list(resourceSpans).forEach((rs, ri) => {
    if (!isObj(rs)) return;
    const resourceObj = field(rs, "resource");
    const resource = isObj(resourceObj) ? attributesOf(resourceObj.attributes) : {};
    list(field(rs, "scopeSpans")).forEach((ss, si) => {
      if (!isObj(ss)) return;
      const scopeObj = ss.scope;
      const scope = isObj(scopeObj)
        ? { name: typeof scopeObj.name === "string" ? clean(scopeObj.name) : "", ...(typeof scopeObj.version === "string" && scopeObj.version ? { version: clean(scopeObj.version) } : {}) }
        : { name: "" };
      list(ss.spans).forEach((span, pi) => {
        const where = () => `resourceSpans[${ri}].scopeSpans[${si}].spans[${pi}]`;
        if (!isObj(span)) return reject(() => `${where()} is not an object`);
        const traceId = idOf(field(span, "traceId"), 32);
        const spanId = idOf(field(span, "spanId"), 16);
        if (!traceId || !spanId) return reject(() => `${where()} has no valid ${traceId ? "spanId (16 hex digits)" : "traceId (32 hex digits)"}`);
        const statusObj = span.status;
        spans.push({
          traceId,
          spanId,
          parentSpanId: idOf(field(span, "parentSpanId"), 16) ?? null,
          name: typeof span.name === "string" ? clean(span.name) : "",
          kind: enumValue(span.kind),
          startNs: nanos(field(span, "startTimeUnixNano")),
          endNs: nanos(field(span, "endTimeUnixNano")),
          attributes: attributesOf(span.attributes),
          events: list(span.events).map(readEvent).filter((e): e is OtelEvent => e !== undefined),
          status: isObj(statusObj)
            ? { code: enumValue(statusObj.code), ...(typeof statusObj.message === "string" && statusObj.message ? { message: clean(statusObj.message) } : {}) }
            : { code: 0 },
          resource,
          scope,
        });
      });
    });
  });
  return { spans, rejected, errors };
}

/** Encode an export request from its JSON-shaped object with the same definitions (tests craft bodies no SDK would send). */
export function encodeProtobufExport(request: Record<string, unknown>): Uint8Array {
  const { request: type } = protoTypes();
  return type.encode(type.fromObject(request)).finish();
}

/** An export body as received (lib/api/otlp.ts reads it): decoded here, on the input pool for any but a small one. */
export type ExportBody = {
  bytes: Uint8Array;
  encoding: "protobuf" | "json";
  /** Sent with `Content-Encoding: gzip`. */
  gzip: boolean;
  /** OTEL_MAX_BODY_BYTES: the most the body may hold, as sent and after gunzip. */
  maxBytes: number;
  /** MAX_JSON_DEPTH: the deepest nesting of arrays and objects an OTLP JSON body may have. */
  maxDepth: number;
};

/** The 413 of an export past OTEL_MAX_BODY_BYTES, as sent or once gunzipped. */
export function exportTooLarge(max: number): AppError {
  return new AppError("payload_too_large", `The export is larger than OTEL_MAX_BODY_BYTES (${max} bytes): export smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE) or raise the limit`);
}

/** The body gunzipped within `max` bytes (413 past it, 400 when it is not gzip). */
export function gunzipExport(bytes: Uint8Array, max: number): Uint8Array {
  try {
    return gunzipSync(bytes, { maxOutputLength: max });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError) throw exportTooLarge(max);
    throw new AppError("bad_request", `The body is not valid gzip: ${(error as Error).message}`);
  }
}

/**
 * A received export body → spans: gunzipped within OTEL_MAX_BODY_BYTES, its JSON nesting bounded
 * before it is parsed (MAX_JSON_DEPTH), then decoded. Errors are AppErrors with the status to answer.
 */
export function decodeExportBody(body: ExportBody): DecodedExport {
  const bytes = body.gzip ? gunzipExport(body.bytes, body.maxBytes) : body.bytes;
  try {
    if (body.encoding === "protobuf") return decodeProtobufExport(bytes);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new AppError("bad_request", "The body is not valid UTF-8");
    }
    const deep = findExcessiveNesting(text, body.maxDepth);
    if (deep !== -1) {
      throw new AppError("bad_request", `The export nests arrays and objects more than ${body.maxDepth} levels deep (MAX_JSON_DEPTH), at character ${deep}: an OTLP export is not that deep`, [
        { path: "(body)", message: `nested more than ${body.maxDepth} levels (MAX_JSON_DEPTH)` },
      ]);
    }
    return decodeJsonExport(text);
  } catch (error) {
    if (error instanceof UnreadableExport) throw new AppError("bad_request", error.message);
    if (error instanceof TooManySpans) throw new AppError("payload_too_large", error.message);
    throw error;
  }
}
