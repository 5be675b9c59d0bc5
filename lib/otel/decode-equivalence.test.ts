/**
 * The protobuf export read straight from the wire (lib/otel/decode-wire.ts) gives exactly what the decoder
 * before it gave: protobufjs' decode, `toObject`, then the normaliser. That decoder is decode.ts's path for the
 * bodies the direct reader leaves (`decodeProtobufExportWithProtobufjs`, the REFERENCE below), and every body here — well-formed ones of every kind of value, bodies only a hand could write
 * (fields twice, out of order, wrong wire types, groups, invalid UTF-8, deep nesting), every truncation of a
 * body and random corruptions of it — is decoded by both: the same spans, deep-equal with the same key order,
 * sharing their resource and scope objects the same way, or the same error. The well-formed ones must also
 * take the direct path (else the comparison would only test the fallback).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { batch } from "@/bench/support/otel-spans";
import { AppError } from "@/lib/errors";
import { decodeExportBody, decodeProtobufExport, decodeProtobufExportWithProtobufjs, encodeProtobufExport, MAX_ERRORS, MAX_SPANS_PER_EXPORT, type DecodedExport } from "./decode";
import { readProtobufExport } from "./decode-wire";
import type { OtelSpan } from "./types";

// REFERENCE: protobufjs' decode, `toObject`, then the normaliser — decode.ts's protobuf path before decode-wire.ts
// (commit bc15062), which decode.ts keeps, unchanged, for the bodies the direct reader leaves.
type RefDecoded = DecodedExport;
const refDecodeProtobufExport = decodeProtobufExportWithProtobufjs;

/** What a decode gave: its result, or its error's class name and text. */
function outcome(decode: () => RefDecoded): { ok: RefDecoded } | { error: string } {
  try {
    return { ok: decode() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name.replace(/^Ref/, "")}: ${(error as Error).message}` };
  }
}

/** JSON that tells -0, NaN and the infinities apart (JSON.stringify writes them all as 0 or null). */
const exact = (value: unknown) =>
  JSON.stringify(value, (_k, v: unknown) => (typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0)) ? `#${Object.is(v, -0) ? "-0" : String(v)}` : v));

/** Which spans share one resource and one scope object, as index lists. */
const sharing = (spans: OtelSpan[]) => spans.map((s) => [spans.findIndex((t) => t.resource === s.resource), spans.findIndex((t) => t.scope === s.scope)]);

/** Both decoders give the same for `bytes`; returns whether the direct path took it. */
function expectSame(bytes: Uint8Array): boolean {
  const before = outcome(() => refDecodeProtobufExport(bytes));
  const after = outcome(() => decodeProtobufExport(bytes));
  if ("error" in before) expect(after).toEqual(before);
  else {
    expect("ok" in after).toBe(true);
    const result = (after as { ok: RefDecoded }).ok;
    expect(result).toStrictEqual(before.ok);
    expect(exact(result)).toBe(exact(before.ok));
    expect(sharing(result.spans)).toEqual(sharing(before.ok.spans));
  }
  return readProtobufExport(bytes, MAX_ERRORS) !== undefined;
}

// Hand-written wire format, for bodies no encoder makes.
const varint = (value: number | bigint): number[] => {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v >= BigInt(128)) {
    out.push(Number(v & BigInt(127)) | 128);
    v >>= BigInt(7);
  }
  out.push(Number(v));
  return out;
};
const tag = (fieldNo: number, wire: number) => varint((fieldNo << 3) | wire);
const ld = (fieldNo: number, ...parts: number[][]): number[] => {
  const body = parts.flat();
  return [...tag(fieldNo, 2), ...varint(body.length), ...body];
};
const str = (fieldNo: number, text: string) => ld(fieldNo, [...Buffer.from(text, "utf8")]);
const raw = (fieldNo: number, bytes: number[]) => ld(fieldNo, bytes);
const vfield = (fieldNo: number, value: number | bigint) => [...tag(fieldNo, 0), ...varint(value)];
const fixed64 = (fieldNo: number, value: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, value));
  return [...tag(fieldNo, 1), ...b];
};
const double = (fieldNo: number, value: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(value);
  return [...tag(fieldNo, 1), ...b];
};
const TRACE = Array.from({ length: 16 }, (_, i) => i + 1);
const SPAN = Array.from({ length: 8 }, (_, i) => 0xa0 + i);
/** A span with valid ids, then `rest`. */
const wireSpan = (...rest: number[][]) => ld(2, raw(1, TRACE), raw(2, SPAN), ...rest);
/** An export of one resource (`resource` fields) and one scope (`scope` fields) holding `spans`. */
const wireExport = (spans: number[][], resource: number[][] = [], scope: number[][] = []) =>
  Uint8Array.from(ld(1, ...(resource.length ? [ld(1, ...resource)] : []), ld(2, ...(scope.length ? [ld(1, ...scope)] : []), ...spans)));
const kv = (key: string, value: number[]) => ld(9, str(1, key), ld(2, value));

// Bodies as an encoder writes them (protobufjs' fromObject + encode, as the SDKs' exporters do).
const hex = (n: number, bytes: number) => Buffer.from(n.toString(16).padStart(bytes * 2, "0"), "hex");
const s = (key: string, value: unknown) => ({ key, value });
const wellFormed: Record<string, unknown>[] = [
  {},
  { resourceSpans: [] },
  { resourceSpans: [{}] },
  { resourceSpans: [{ scopeSpans: [{}] }] },
  {
    resourceSpans: [
      {
        resource: { attributes: [s("service.name", { stringValue: "svc" }), s("host.cpus", { intValue: 8 }), s("empty", {})], droppedAttributesCount: 2 },
        schemaUrl: "https://opentelemetry.io/schemas/1.26.0",
        scopeSpans: [
          {
            scope: { name: "lib", version: "1.2.3", attributes: [s("scope.attr", { boolValue: true })], droppedAttributesCount: 1 },
            schemaUrl: "https://x",
            spans: [
              {
                traceId: hex(1, 16),
                spanId: hex(2, 8),
                parentSpanId: hex(3, 8),
                traceState: "vendor=1",
                flags: 257,
                name: "chat gpt-4o",
                kind: 3,
                startTimeUnixNano: "1780000000000000000",
                endTimeUnixNano: "1780000000123456789",
                attributes: [
                  s("str", { stringValue: "text" }),
                  s("empty.str", { stringValue: "" }),
                  s("nul", { stringValue: "a\u0000b" }),
                  s("uni", { stringValue: "héllo — 日本語 🎉" }),
                  s("uni.long", { stringValue: "ü".repeat(100) }),
                  s("bom", { stringValue: "\uFEFFbom" }),
                  s("ascii.long", { stringValue: "x".repeat(5000) }),
                  s("t", { boolValue: true }),
                  s("f", { boolValue: false }),
                  s("zero", { intValue: 0 }),
                  s("neg", { intValue: -42 }),
                  s("int.safe", { intValue: "9007199254740991" }),
                  s("int.2^53", { intValue: "9007199254740992" }),
                  s("int.big", { intValue: "9007199254740993" }),
                  s("int.max", { intValue: "9223372036854775807" }),
                  s("int.min", { intValue: "-9223372036854775808" }),
                  s("int.negsafe", { intValue: "-9007199254740991" }),
                  s("int.negbig", { intValue: "-9007199254740993" }),
                  s("int.2^32", { intValue: "4294967296" }),
                  s("int.-2^31", { intValue: -2147483648 }),
                  s("d", { doubleValue: 3.25 }),
                  s("d.zero", { doubleValue: 0 }),
                  s("d.negzero", { doubleValue: -0 }),
                  s("d.nan", { doubleValue: NaN }),
                  s("d.inf", { doubleValue: -Infinity }),
                  s("arr", { arrayValue: { values: [{ stringValue: "a" }, { intValue: 1 }, {}, { arrayValue: { values: [{ boolValue: false }, { arrayValue: {} }] } }] } }),
                  s("arr.empty", { arrayValue: {} }),
                  s("kv", { kvlistValue: { values: [s("x", { doubleValue: 1.5 }), s("y", { kvlistValue: { values: [s("z", { bytesValue: Buffer.from([1, 2, 3]) })] } }), s("", { intValue: 1 })] } }),
                  s("kv.empty", { kvlistValue: {} }),
                  s("bytes", { bytesValue: Buffer.from("hello bytes") }),
                  s("bytes.empty", { bytesValue: Buffer.alloc(0) }),
                  s("no.value", undefined),
                  s("", { stringValue: "empty key" }),
                  s("__proto__", { stringValue: "not a prototype" }),
                  s("constructor", { intValue: 7 }),
                  s("str", { stringValue: "repeated key: last wins" }),
                  s("10", { stringValue: "an index-like key" }),
                  s("k\u0000ey", { stringValue: "a NUL in the key" }),
                  { value: { stringValue: "no key" } },
                ],
                droppedAttributesCount: 3,
                events: [
                  { timeUnixNano: "1780000000000000001", name: "gen_ai.content.prompt", attributes: [s("gen_ai.prompt", { stringValue: "hi" })] },
                  { name: "no time" },
                  {},
                  { timeUnixNano: "1", name: "\u0000" },
                ],
                droppedEventsCount: 1,
                links: [{ traceId: hex(9, 16), spanId: hex(9, 8), traceState: "l=1", attributes: [s("link", { intValue: 1 })], droppedAttributesCount: 1, flags: 1 }],
                droppedLinksCount: 4,
                status: { code: 2, message: "boom" },
              },
              { traceId: hex(1, 16), spanId: hex(4, 8), name: "", status: { code: 1 } },
              { traceId: hex(1, 16), spanId: hex(5, 8), status: { message: "\u0000" } },
              { traceId: hex(1, 16), spanId: hex(6, 8), status: {} },
              { traceId: hex(1, 16), spanId: hex(7, 8), startTimeUnixNano: "18446744073709551615", endTimeUnixNano: "9999999999999999999" },
              { traceId: hex(1, 16), spanId: hex(8, 8), startTimeUnixNano: "10000000000000000000", endTimeUnixNano: "9007199254740993", kind: -1 },
              { traceId: hex(1, 16), spanId: hex(9, 8), kind: 2147483647, name: "\uFEFF" },
            ],
          },
          { scope: { name: "" }, spans: [{ traceId: hex(2, 16), spanId: hex(1, 8), parentSpanId: Buffer.alloc(0) }] },
          { scope: { version: "only version" }, spans: [{ traceId: hex(2, 16), spanId: hex(2, 8), parentSpanId: Buffer.alloc(8) }] },
          { spans: [{ traceId: hex(2, 16), spanId: hex(3, 8), parentSpanId: hex(1, 4) }] },
        ],
      },
      { scopeSpans: [{ spans: [{ traceId: hex(3, 16), spanId: hex(1, 8) }] }] },
      { resource: {}, scopeSpans: [{ scope: {}, spans: [{ traceId: hex(3, 16), spanId: hex(2, 8) }] }] },
    ],
  },
  // Rejected spans: every reason, and more of them than the errors name.
  {
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: [
              { spanId: hex(1, 8) },
              { traceId: hex(1, 16) },
              { traceId: Buffer.alloc(16), spanId: hex(1, 8) },
              { traceId: hex(1, 16), spanId: Buffer.alloc(8) },
              { traceId: hex(1, 8), spanId: hex(1, 8) },
              { traceId: hex(1, 16), spanId: hex(1, 16) },
              {},
              { traceId: hex(1, 16), spanId: hex(1, 8), name: "kept" },
            ],
          },
        ],
      },
      { scopeSpans: [{}, { spans: [{ traceId: hex(1, 17), spanId: hex(1, 8) }] }] },
    ],
  },
];

describe("decoding a protobuf export straight from the wire", () => {
  it("gives the same spans as protobufjs + toObject + the normaliser, for every kind of value, id, status and event", () => {
    for (const request of wellFormed) {
      const bytes = encodeProtobufExport(request);
      expect(expectSame(bytes)).toBe(true);
      // As a Buffer too (a gunzipped body is one; protobufjs then reads it with its BufferReader).
      expect(expectSame(Buffer.from(bytes))).toBe(true);
    }
    const rejected = decodeProtobufExport(encodeProtobufExport(wellFormed[5]));
    expect(rejected.rejected).toBe(8);
    expect(rejected.errors).toHaveLength(MAX_ERRORS);
    expect(rejected.errors[0]).toBe("resourceSpans[0].scopeSpans[0].spans[0] has no valid traceId (32 hex digits)");
    expect(rejected.errors[1]).toBe("resourceSpans[0].scopeSpans[0].spans[1] has no valid spanId (16 hex digits)");
  });

  it("gives the same for the benchmark's GenAI exports (512 spans each, histories of every length), through decodeExportBody", () => {
    for (let i = 0; i < 6; i++) {
      const bytes = batch();
      expect(expectSame(bytes)).toBe(true);
      const body = decodeExportBody({ bytes, encoding: "protobuf", gzip: false, maxBytes: 1 << 24, maxDepth: 64 });
      expect(body).toStrictEqual(refDecodeProtobufExport(bytes));
      expect(body.spans).toHaveLength(512);
    }
  });

  it("gives the same for fields out of order, unknown fields of every wire type, and non-minimal varints", () => {
    const direct = [
      // The resource after its scopes, the scope after its spans.
      Uint8Array.from(ld(1, ld(2, wireSpan(str(5, "a")), ld(1, str(1, "late scope"), str(2, "v1")), wireSpan(str(5, "b"))), ld(1, ld(1, str(1, "k"), ld(2, str(1, "late resource")))))),
      // Unknown fields: varint, fixed64, length-delimited, fixed32, in every message.
      wireExport(
        [wireSpan(vfield(99, 5), fixed64(98, BigInt(1)), str(97, "x"), [...tag(96, 5), 1, 2, 3, 4], kv("a", [...vfield(50, 1), ...str(1, "v")]))],
        [vfield(99, 1), ld(1, str(1, "r"), vfield(9, 1), ld(2, str(1, "rv"), fixed64(9, BigInt(2))))],
        [str(1, "s"), vfield(99, 1)],
      ),
      // A tag written in two bytes where one does, a length in three.
      ((content: number[]) => Uint8Array.from([0x8a, 0x00, (content.length & 127) | 128, ((content.length >> 7) & 127) | 128, content.length >> 14, ...content]))(ld(2, wireSpan())),
      // kind and status code as 10-byte negative varints; bool with only high bits set; int64 with bits past 32.
      wireExport([wireSpan(vfield(6, -3), ld(15, vfield(3, -1), str(2, "m")), kv("b", [...tag(2, 0), 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), kv("i", vfield(3, BigInt("0x1234567890"))))]),
      // The same repeated field interleaved with others (attributes, events).
      wireExport([wireSpan(kv("a", str(1, "1")), str(5, "n"), kv("b", str(1, "2")), ld(11, str(2, "e1")), vfield(6, 2), ld(11, str(2, "e2")), kv("a", str(1, "3")))]),
      // Times: zero, one, 2^53 + 1, past 19 digits; a double's bytes as NaN with a payload.
      wireExport([wireSpan(fixed64(7, BigInt(0)), fixed64(8, BigInt(1)), ld(11, fixed64(1, BigInt("9007199254740993")))), wireSpan(fixed64(7, BigInt("0xFFFFFFFFFFFFFFFF")), kv("nan", [...tag(4, 1), 1, 0, 0, 0, 0, 0, 0xf8, 0x7f]), kv("negzero", double(4, -0)), kv("tiny", double(4, 5e-324)))]),
      // An empty key written explicitly (protobufjs reads it as absent: the attribute is dropped).
      wireExport([wireSpan(kv("", str(1, "x")), ld(9, str(1, "k")), ld(9, ld(2, str(1, "keyless"))))]),
      // Nesting: 30 arrays deep, 9 key-value lists deep (within protobufjs' and anyValue's limits).
      wireExport([wireSpan(kv("deep", Array.from({ length: 30 }).reduce<number[]>((inner) => ld(5, ld(1, inner)), str(1, "bottom"))))]),
      wireExport([wireSpan(kv("deep", Array.from({ length: 9 }).reduce<number[]>((inner) => ld(6, ld(1, str(1, "k"), ld(2, inner))), vfield(3, 1))))]),
    ];
    for (const bytes of direct) expect(expectSame(bytes)).toBe(true);
  });

  it("leaves to protobufjs what it decides — fields and oneof members twice, wrong wire types, groups, field 0, bad UTF-8, deep nesting — with the same outcome", () => {
    const odd = [
      wireExport([wireSpan(kv("two", [...str(1, "a"), ...vfield(3, 1)]))]),
      wireExport([wireSpan(kv("twice", [...str(1, "a"), ...str(1, "b")]))]),
      wireExport([wireSpan(kv("arrays", [...ld(5, ld(1, str(1, "a"))), ...ld(5, ld(1, str(1, "b")))]))]),
      wireExport([wireSpan(ld(15, vfield(3, 2)), ld(15, str(2, "merged")))]),
      wireExport([wireSpan(str(5, "a"), str(5, ""))]),
      Uint8Array.from([...ld(1, ld(1), ld(1, ld(1, str(1, "k"), ld(2, str(1, "v"))))), ...ld(1, ld(2, wireSpan()))]),
      Uint8Array.from(ld(1, ld(1, str(1, "a")), ld(2, ld(1, str(1, "b")), wireSpan()))),
      Uint8Array.from(ld(1, ld(2, ld(1, str(1, "a")), ld(1, str(2, "b")), wireSpan()))),
      wireExport([ld(2, raw(1, TRACE), raw(1, TRACE), raw(2, SPAN))]),
      wireExport([wireSpan(vfield(5, 1))]), // name as a varint
      wireExport([wireSpan([...tag(7, 0), 5])]), // a time as a varint
      wireExport([wireSpan(kv("w", vfield(1, 3)))]), // stringValue as a varint
      wireExport([wireSpan([...tag(50, 3), ...vfield(1, 1), ...tag(50, 4)])]), // a group
      wireExport([wireSpan([...tag(50, 4)])]), // an end group alone
      wireExport([wireSpan([...tag(50, 6), 0])]), // wire type 6
      wireExport([wireSpan([0, 0])]), // field 0
      wireExport([wireSpan(vfield(1 << 26, 1))]), // a 5-byte tag
      wireExport([wireSpan(raw(5, [0x61, 0xff, 0x62]))]), // invalid UTF-8, short
      wireExport([wireSpan(raw(5, [...Buffer.from("a".repeat(70)), 0xc0, 0x80]))]), // overlong, long
      wireExport([wireSpan(raw(5, [0xed, 0xa0, 0x80]))]), // a surrogate
      wireExport([wireSpan(raw(3, [0xff]))]), // bad UTF-8 in trace_state, which is not kept
      Uint8Array.from(ld(1, raw(3, [0xff]), ld(2, wireSpan()))), // … in schema_url
      wireExport([wireSpan(ld(13, raw(3, [0xff])))]), // … in a link
      wireExport([wireSpan()], [ld(3, raw(2, [0xff]))]), // … in an entity ref
      wireExport([wireSpan()], [], [ld(3, str(1, "k"), ld(2, raw(1, [0xff])))]), // … in a scope attribute
      wireExport([wireSpan(ld(11, raw(2, [0xff])))]), // … in an event name
      wireExport([wireSpan(kv("deep", Array.from({ length: 40 }).reduce<number[]>((inner) => ld(5, ld(1, inner)), str(1, "bottom"))))]),
      wireExport([wireSpan(kv("deep", Array.from({ length: 33 }).reduce<number[]>((inner) => ld(6, ld(1, str(1, "k"), ld(2, inner))), vfield(3, 1))))]),
      // 30 and 32 key-value lists deep: the innermost value 95 and 101 messages down (protobufjs refuses past 100).
      wireExport([wireSpan(kv("deep", Array.from({ length: 30 }).reduce<number[]>((inner) => ld(6, ld(1, str(1, "k"), ld(2, inner))), vfield(3, 1))))]),
      wireExport([wireSpan(kv("deep", Array.from({ length: 32 }).reduce<number[]>((inner) => ld(6, ld(1, str(1, "k"), ld(2, inner))), vfield(3, 1))))]),
      wireExport([wireSpan(kv("deeper", Array.from({ length: 60 }).reduce<number[]>((inner) => ld(6, ld(1, str(1, "k"), ld(2, inner))), vfield(3, 1))))]),
      wireExport([wireSpan(kv("v", [...tag(3, 0), ...Array(11).fill(0x80), 1]))]), // an 12-byte varint
      wireExport([wireSpan([...tag(6, 0), 0x80])]), // a varint cut short
      wireExport([wireSpan([...tag(7, 1), 1, 2, 3])]), // a fixed64 cut short
      Uint8Array.from([...tag(1, 2), 0x80, 0x80, 0x80, 0x80, 0x01]), // a length in 5 bytes, past the end
      Uint8Array.from([...tag(1, 2), 100, 1, 2]), // a length past the end
      Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
      Uint8Array.from([]),
    ];
    for (const bytes of odd) expectSame(bytes);
  });

  it("gives the same outcome for every truncation of a body", () => {
    const bytes = encodeProtobufExport(wellFormed[4]);
    for (let end = 0; end <= bytes.length; end++) expectSame(bytes.subarray(0, end));
  });

  it("gives the same outcome for randomly corrupted bodies", () => {
    const bodies = [encodeProtobufExport(wellFormed[4]), encodeProtobufExport(wellFormed[5]), wireExport([wireSpan(kv("k", ld(6, ld(1, str(1, "a"), ld(2, ld(5, ld(1, vfield(3, -1))))))))])];
    let direct = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: bodies.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (which, edits) => {
          const bytes = Uint8Array.from(bodies[which]);
          for (const [at, value] of edits) bytes[at % bytes.length] = value;
          if (expectSame(bytes)) direct++;
        },
      ),
      { numRuns: 3000, seed: 52 },
    );
    // Both paths were compared: many corruptions still read directly, many are left to protobufjs.
    expect(direct).toBeGreaterThan(500);
    expect(direct).toBeLessThan(2500);
  });

  it("still answers a body it cannot read, and one of too many spans, as before (400, 413)", () => {
    const unreadable = Uint8Array.from([...tag(1, 2), 100, 1, 2]);
    const before = outcome(() => refDecodeProtobufExport(unreadable));
    expect(before).toEqual({ error: expect.stringMatching(/^UnreadableExport: Not an OTLP protobuf ExportTraceServiceRequest: /) });
    let thrown: unknown;
    try {
      decodeExportBody({ bytes: unreadable, encoding: "protobuf", gzip: false, maxBytes: 1 << 20, maxDepth: 64 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe("bad_request");
    expect(`UnreadableExport: ${(thrown as AppError).message}`).toBe((before as { error: string }).error);
    const many = Uint8Array.from(ld(1, ld(2, ...Array.from({ length: MAX_SPANS_PER_EXPORT + 1 }, () => [...tag(2, 2), 0]))));
    expectSame(many);
    expect(outcome(() => decodeProtobufExport(many))).toEqual({ error: expect.stringMatching(/^TooManySpans: The export holds more than/) });
  });
});
