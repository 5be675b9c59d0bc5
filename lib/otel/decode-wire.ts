/**
 * A protobuf `ExportTraceServiceRequest` read straight from the wire into spans, in one pass: no protobufjs
 * message, no `toObject` copy, no Long objects, no snake/camel field lookups. It gives exactly what
 * protobufjs' decode + `toObject` + the normaliser of decode.ts (`readExport`) give, for the bodies SDKs and
 * collectors send; for anything unusual — malformed or truncated bytes, invalid UTF-8, a known field with
 * another wire type, a field or oneof member set twice (protobufjs merges or keeps the last one), groups,
 * values nested deeper than `anyValue` reads or near protobufjs' recursion limit — it gives up
 * (`undefined`) and the caller decodes the body the old way, so errors and odd cases keep their exact
 * behaviour and texts. lib/otel/decode-equivalence.test.ts holds the old algorithm and checks both agree.
 *
 * What protobufjs does that this mirrors (protobufjs 8, proto3 implicit presence): a scalar or string field
 * at its default (empty, 0) reads as absent, so a KeyValue with an empty key is dropped like one without a
 * key; oneof members keep their presence (an empty `stringValue` is ""); strings are strict UTF-8 keeping a
 * byte order mark; `bool` is true when any bit of its varint is; int32 enums keep the low 32 bits, signed.
 */
import type { AttrValue, Attributes, OtelEvent, OtelSpan } from "./types";

/** Thrown inside, caught by readProtobufExport: decode this body the old way. Made once: no stack per throw. */
const GIVE_UP = new Error("decode the old way");
const giveUp = (): never => {
  throw GIVE_UP;
};

/** protobufjs refuses messages nested deeper than 100; well before that, let it decide (and word the error). */
const MAX_MESSAGE_DEPTH = 90;
/** `anyValue` reads nothing deeper than this (null beyond); such a value goes the old way. */
const MAX_VALUE_DEPTH = 32;

/** Buffer's own slicers (what `toString(encoding, start, end)` calls after choosing one), not in @types/node. */
type Slicers = { latin1Slice(start: number, end: number): string; hexSlice(start: number, end: number): string; base64Slice(start: number, end: number): string };
const EMPTY = Buffer.alloc(0) as Buffer & Slicers;
let buf = EMPTY;
let pos = 0;

/** What protobufjs reads strings with (`stringVerify`): fatal on invalid UTF-8, keeps a leading BOM. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Text as stored: without NUL characters (as decode.ts's `clean`). */
const clean = (s: string): string => (s.includes("\u0000") ? s.replaceAll("\u0000", "") : s);

/** A field tag: at most 4 bytes (field numbers below 2^25; longer ones go the old way), never field 0 (protobufjs refuses it). */
function tag(end: number): number {
  const t = varint28(end);
  if (t < 8) giveUp();
  return t;
}

/** A varint of at most 4 bytes (below 2^28). */
function varint28(end: number): number {
  if (pos >= end) giveUp();
  let b = buf[pos++];
  if (b < 128) return b;
  let value = b & 127;
  for (let shift = 7; shift < 28; shift += 7) {
    if (pos >= end) giveUp();
    b = buf[pos++];
    value |= (b & 127) << shift;
    if (b < 128) return value;
  }
  return giveUp();
}

/** A varint's low 32 bits, unsigned (protobufjs' `uint32`: up to 10 bytes). */
function uint32(end: number): number {
  let value = 0;
  for (let shift = 0; shift < 70; shift += 7) {
    if (pos >= end) giveUp();
    const b = buf[pos++];
    if (shift < 32) value |= (b & 127) << shift;
    if (b < 128) return value >>> 0;
  }
  return giveUp();
}

/** A varint as protobufjs' `bool` reads it: true when any of its bits is set. */
function bool(end: number): boolean {
  let value = false;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) giveUp();
    const b = buf[pos++];
    if (b & 127) value = true;
    if (b < 128) return value;
  }
  return giveUp();
}

/** A length prefix (below 2^28), checked against the end of the enclosing message. */
function length(end: number): number {
  const n = varint28(end);
  if (pos + n > end) giveUp();
  return n;
}

/** The end of the length-delimited field starting here (its length read first: `pos + length(end)` would add the old `pos`). */
function sub(end: number): number {
  const n = length(end);
  return pos + n;
}

/** A signed int64 varint as `intValue` (decode.ts) makes it: a number when safe, else its decimal text. */
function int64(end: number): AttrValue {
  let lo = 0;
  let hi = 0;
  let b = 0;
  let done = false;
  for (let shift = 0; shift < 28; shift += 7) {
    if (pos >= end) giveUp();
    b = buf[pos++];
    lo |= (b & 127) << shift;
    if (b < 128) {
      done = true;
      break;
    }
  }
  if (!done) {
    if (pos >= end) giveUp();
    b = buf[pos++];
    lo |= (b & 127) << 28;
    hi = (b & 127) >> 4;
    if (b >= 128) {
      for (let shift = 3; shift < 38; shift += 7) {
        if (pos >= end) giveUp();
        b = buf[pos++];
        hi |= (b & 127) << shift;
        if (b < 128) {
          done = true;
          break;
        }
      }
      if (!done) giveUp();
    }
  }
  lo >>>= 0;
  const n = (hi | 0) * 4294967296 + lo;
  if (Number.isSafeInteger(n)) return n;
  return BigInt.asIntN(64, (BigInt(hi >>> 0) << BigInt(32)) | BigInt(lo)).toString();
}

/** A fixed64 time as `nanos` (decode.ts) makes it: 19 decimal digits, zeros when absent or past 19 digits. */
function fixed64Nanos(end: number): string {
  if (pos + 8 > end) giveUp();
  const lo = buf.readUInt32LE(pos);
  const hi = buf.readUInt32LE(pos + 4);
  pos += 8;
  const text = hi < 0x200000 ? String(hi * 4294967296 + lo) : ((BigInt(hi) << BigInt(32)) | BigInt(lo)).toString();
  return text.length > 19 ? ZERO_NANOS : text.padStart(19, "0");
}
const ZERO_NANOS = "0".repeat(19);

/** Skips a field of an unread number; groups and invalid wire types go the old way. */
function skip(wire: number, end: number): void {
  if (wire === 0) uint32(end);
  else if (wire === 2) pos = sub(end);
  else if (wire === 1 || wire === 5) {
    const n = wire === 1 ? 8 : 4;
    if (pos + n > end) giveUp();
    pos += n;
  } else giveUp();
}

/** A length-delimited string, strict UTF-8 as protobufjs reads it. */
function string(end: number): string {
  const n = length(end);
  const start = pos;
  pos += n;
  if (n < 64) {
    let i = start;
    while (i < pos && buf[i] < 128) i++;
    if (i === pos) return buf.latin1Slice(start, pos);
  }
  try {
    return strictUtf8.decode(buf.subarray(start, pos));
  } catch {
    return giveUp();
  }
}

/** A length-delimited id as lowercase hex when it has `bytes` bytes and is not all zeros (decode.ts's `idOf`). */
function id(end: number, bytes: number): string | undefined {
  const n = length(end);
  const start = pos;
  pos += n;
  if (n !== bytes) return undefined;
  for (let i = start; i < pos; i++) if (buf[i] !== 0) return buf.hexSlice(start, pos);
  return undefined;
}

/** Field numbers seen in this message, for the singular ones: a second one goes the old way. */
const once = (seen: number, field: number): number => {
  const bit = 1 << field;
  if (seen & bit) giveUp();
  return seen | bit;
};

/** An AnyValue as `anyValue` (decode.ts) makes it. */
function anyValue(end: number, depth: number, level: number): AttrValue {
  if (depth > MAX_VALUE_DEPTH || level > MAX_MESSAGE_DEPTH) giveUp();
  let value: AttrValue = null;
  let set = false;
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    const wire = t & 7;
    if (field >= 1 && field <= 7) {
      // A second member (or the same one twice): protobufjs keeps the last, merging messages.
      if (set) giveUp();
      set = true;
    }
    switch (field) {
      case 1:
        if (wire !== 2) giveUp();
        value = clean(string(end));
        break;
      case 2:
        if (wire !== 0) giveUp();
        value = bool(end);
        break;
      case 3:
        if (wire !== 0) giveUp();
        value = int64(end);
        break;
      case 4:
        if (wire !== 1 || pos + 8 > end) giveUp();
        value = buf.readDoubleLE(pos);
        pos += 8;
        break;
      case 5: {
        if (wire !== 2) giveUp();
        const arrayEnd = sub(end);
        value = arrayValue(arrayEnd, depth + 1, level + 1);
        break;
      }
      case 6: {
        if (wire !== 2) giveUp();
        const listEnd = sub(end);
        const attributes: Attributes = {};
        keyValues(listEnd, 1, attributes, depth + 1, level + 1);
        value = attributes;
        break;
      }
      case 7: {
        if (wire !== 2) giveUp();
        const n = length(end);
        value = buf.base64Slice(pos, pos + n);
        pos += n;
        break;
      }
      default:
        skip(wire, end);
    }
  }
  return value;
}

/** An ArrayValue's values. */
function arrayValue(end: number, depth: number, level: number): AttrValue[] {
  if (level > MAX_MESSAGE_DEPTH) giveUp();
  const values: AttrValue[] = [];
  while (pos < end) {
    const t = tag(end);
    if (t === ((1 << 3) | 2)) {
      const valueEnd = sub(end);
      values.push(anyValue(valueEnd, depth, level + 1));
    } else if (t >>> 3 === 1) giveUp();
    else skip(t & 7, end);
  }
  return values;
}

/**
 * The KeyValues under field number `fieldNo` of the message ending at `end` (a KeyValueList, or the
 * attributes of a resource, scope, span, event or link — `level` is that message's), other fields skipped,
 * into `out` as `attributesOf` (decode.ts) makes it: a repeated key keeps its last value.
 */
function keyValues(end: number, fieldNo: number, out: Attributes, depth: number, level: number): void {
  if (level > MAX_MESSAGE_DEPTH) giveUp();
  const wanted = (fieldNo << 3) | 2;
  while (pos < end) {
    const t = tag(end);
    if (t === wanted) keyValue(sub(end), out, depth, level + 1);
    else if (t >>> 3 === fieldNo) giveUp();
    else skip(t & 7, end);
  }
}

/** One KeyValue into `out` (one without a key, or with an empty one, is dropped as protobufjs reads it as absent). */
function keyValue(end: number, out: Attributes, depth: number, level: number): void {
  if (level > MAX_MESSAGE_DEPTH) giveUp();
  let key = "";
  let value: AttrValue = null;
  let seen = 0;
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    if (field === 1) {
      if ((t & 7) !== 2) giveUp();
      seen = once(seen, 1);
      key = string(end);
    } else if (field === 2) {
      if ((t & 7) !== 2) giveUp();
      seen = once(seen, 2);
      value = anyValue(sub(end), depth, level + 1);
    } else skip(t & 7, end);
  }
  if (key === "") return;
  key = clean(key);
  // An own property even for "__proto__", which plain assignment would take as the object's prototype.
  if (key === "__proto__") Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** Skips a message field whose content is not used, still reading it as protobufjs would (so a bad one goes the old way). */
function validateLink(end: number, level: number): void {
  if (level > MAX_MESSAGE_DEPTH) giveUp();
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    const wire = t & 7;
    if (field === 1 || field === 2) {
      if (wire !== 2) giveUp();
      pos = sub(end);
    } else if (field === 3) {
      if (wire !== 2) giveUp();
      string(end);
    } else if (field === 4) {
      if (wire !== 2) giveUp();
      keyValue(sub(end), {}, 0, level + 1);
    } else if (field === 5) {
      if (wire !== 0) giveUp();
      uint32(end);
    } else if (field === 6) {
      if (wire !== 5) giveUp();
      skip(5, end);
    } else skip(wire, end);
  }
}

/** An EntityRef of a resource: four string fields, read (validated) and dropped. */
function validateEntityRef(end: number, level: number): void {
  if (level > MAX_MESSAGE_DEPTH) giveUp();
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    if (field >= 1 && field <= 4) {
      if ((t & 7) !== 2) giveUp();
      string(end);
    } else skip(t & 7, end);
  }
}

/** A Resource's attributes (`attributesOf(resource.attributes)`). */
function resource(end: number, level: number): Attributes {
  const attributes: Attributes = {};
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    const wire = t & 7;
    if (field === 1) {
      if (wire !== 2) giveUp();
      keyValue(sub(end), attributes, 0, level + 1);
    } else if (field === 2) {
      if (wire !== 0) giveUp();
      uint32(end);
    } else if (field === 3) {
      if (wire !== 2) giveUp();
      validateEntityRef(sub(end), level + 1);
    } else skip(wire, end);
  }
  return attributes;
}

type Scope = OtelSpan["scope"];

/** An InstrumentationScope as readExport makes it: its name, its version when not empty; its attributes read and dropped. */
function scope(end: number, level: number): Scope {
  let name = "";
  let version = "";
  let seen = 0;
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    const wire = t & 7;
    if (field === 1 || field === 2) {
      if (wire !== 2) giveUp();
      seen = once(seen, field);
      if (field === 1) name = string(end);
      else version = string(end);
    } else if (field === 3) {
      if (wire !== 2) giveUp();
      keyValue(sub(end), {}, 0, level + 1);
    } else if (field === 4) {
      if (wire !== 0) giveUp();
      uint32(end);
    } else skip(wire, end);
  }
  return version ? { name: clean(name), version: clean(version) } : { name: clean(name) };
}

/** A span event as `readEvent` (decode.ts) makes it. */
function event(end: number, level: number): OtelEvent {
  if (level > MAX_MESSAGE_DEPTH) giveUp();
  let name = "";
  let timeNs = ZERO_NANOS;
  const attributes: Attributes = {};
  let seen = 0;
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    const wire = t & 7;
    if (field === 1) {
      if (wire !== 1) giveUp();
      seen = once(seen, 1);
      timeNs = fixed64Nanos(end);
    } else if (field === 2) {
      if (wire !== 2) giveUp();
      seen = once(seen, 2);
      name = string(end);
    } else if (field === 3) {
      if (wire !== 2) giveUp();
      keyValue(sub(end), attributes, 0, level + 1);
    } else if (field === 4) {
      if (wire !== 0) giveUp();
      uint32(end);
    } else skip(wire, end);
  }
  return { name: clean(name), timeNs, attributes };
}

/** A Status as readExport makes it: its code (a signed int32), its message when not empty. */
function status(end: number): OtelSpan["status"] {
  let code = 0;
  let message = "";
  let seen = 0;
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    const wire = t & 7;
    if (field === 2) {
      if (wire !== 2) giveUp();
      seen = once(seen, 2);
      message = string(end);
    } else if (field === 3) {
      if (wire !== 0) giveUp();
      seen = once(seen, 3);
      code = uint32(end) | 0;
    } else skip(wire, end);
  }
  return message ? { code, message: clean(message) } : { code };
}

/** What readProtobufExport gathers: the spans, and the rejected ones' count and first reasons. */
type Out = { spans: OtelSpan[]; rejected: number; errors: string[]; maxErrors: number };

/** Scope and resource are set by the caller once their message is read (either may follow the spans on the wire). */
const PENDING_SCOPE: Scope = { name: "" };
const PENDING_RESOURCE: Attributes = {};

/** One span (level 3), pushed to `out.spans`, or rejected with readExport's reason. */
function span(end: number, out: Out, ri: number, si: number, pi: number): void {
  let traceId: string | undefined;
  let spanId: string | undefined;
  let parentSpanId: string | undefined;
  let name = "";
  let kind = 0;
  let startNs = ZERO_NANOS;
  let endNs = ZERO_NANOS;
  const attributes: Attributes = {};
  const events: OtelEvent[] = [];
  let spanStatus: OtelSpan["status"] | undefined;
  let seen = 0;
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    const wire = t & 7;
    switch (field) {
      case 1:
        if (wire !== 2) giveUp();
        seen = once(seen, 1);
        traceId = id(end, 16);
        break;
      case 2:
        if (wire !== 2) giveUp();
        seen = once(seen, 2);
        spanId = id(end, 8);
        break;
      case 3:
        if (wire !== 2) giveUp();
        string(end); // trace_state: read (protobufjs checks its UTF-8), not kept
        break;
      case 4:
        if (wire !== 2) giveUp();
        seen = once(seen, 4);
        parentSpanId = id(end, 8);
        break;
      case 5:
        if (wire !== 2) giveUp();
        seen = once(seen, 5);
        name = string(end);
        break;
      case 6:
        if (wire !== 0) giveUp();
        seen = once(seen, 6);
        kind = uint32(end) | 0;
        break;
      case 7:
        if (wire !== 1) giveUp();
        seen = once(seen, 7);
        startNs = fixed64Nanos(end);
        break;
      case 8:
        if (wire !== 1) giveUp();
        seen = once(seen, 8);
        endNs = fixed64Nanos(end);
        break;
      case 9:
        if (wire !== 2) giveUp();
        keyValue(sub(end), attributes, 0, 4);
        break;
      case 11:
        if (wire !== 2) giveUp();
        events.push(event(sub(end), 4));
        break;
      case 13:
        if (wire !== 2) giveUp();
        validateLink(sub(end), 4);
        break;
      case 15:
        if (wire !== 2) giveUp();
        seen = once(seen, 15);
        spanStatus = status(sub(end));
        break;
      case 10:
      case 12:
      case 14:
        if (wire !== 0) giveUp();
        uint32(end);
        break;
      case 16:
        if (wire !== 5) giveUp();
        skip(5, end);
        break;
      default:
        skip(wire, end);
    }
  }
  if (!traceId || !spanId) {
    out.rejected++;
    if (out.errors.length < out.maxErrors) {
      out.errors.push(`resourceSpans[${ri}].scopeSpans[${si}].spans[${pi}] has no valid ${traceId ? "spanId (16 hex digits)" : "traceId (32 hex digits)"}`);
    }
    return;
  }
  out.spans.push({
    traceId,
    spanId,
    parentSpanId: parentSpanId ?? null,
    name: clean(name),
    kind,
    startNs,
    endNs,
    attributes,
    events,
    status: spanStatus ?? { code: 0 },
    resource: PENDING_RESOURCE,
    scope: PENDING_SCOPE,
  });
}

/** A ScopeSpans (level 2): its spans, with their scope. */
function scopeSpans(end: number, out: Out, ri: number, si: number): void {
  const first = out.spans.length;
  let spanScope: Scope | undefined;
  let pi = 0;
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    const wire = t & 7;
    if (field === 2) {
      if (wire !== 2) giveUp();
      span(sub(end), out, ri, si, pi++);
    } else if (field === 1) {
      if (wire !== 2 || spanScope) giveUp();
      spanScope = scope(sub(end), 3);
    } else if (field === 3) {
      if (wire !== 2) giveUp();
      string(end);
    } else skip(wire, end);
  }
  const shared = spanScope ?? { name: "" };
  for (let i = first; i < out.spans.length; i++) out.spans[i].scope = shared;
}

/** A ResourceSpans (level 1): its scopes' spans, with their resource. */
function resourceSpans(end: number, out: Out, ri: number): void {
  const first = out.spans.length;
  let spanResource: Attributes | undefined;
  let si = 0;
  while (pos < end) {
    const t = tag(end);
    const field = t >>> 3;
    const wire = t & 7;
    if (field === 2) {
      if (wire !== 2) giveUp();
      scopeSpans(sub(end), out, ri, si++);
    } else if (field === 1) {
      if (wire !== 2 || spanResource) giveUp();
      spanResource = resource(sub(end), 2);
    } else if (field === 3) {
      if (wire !== 2) giveUp();
      string(end);
    } else skip(wire, end);
  }
  const shared = spanResource ?? {};
  for (let i = first; i < out.spans.length; i++) out.spans[i].resource = shared;
}

/**
 * The spans of a protobuf export, as decode.ts's protobufjs path gives them (`maxErrors` reasons kept), or
 * undefined when the body has anything that path must decide (the caller then takes it).
 */
export function readProtobufExport(bytes: Uint8Array, maxErrors: number): { spans: OtelSpan[]; rejected: number; errors: string[] } | undefined {
  buf = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as Buffer & Slicers;
  pos = 0;
  const out: Out = { spans: [], rejected: 0, errors: [], maxErrors };
  try {
    const end = buf.length;
    let ri = 0;
    while (pos < end) {
      const t = tag(end);
      if (t === ((1 << 3) | 2)) resourceSpans(sub(end), out, ri++);
      else if (t >>> 3 === 1) giveUp();
      else skip(t & 7, end);
    }
  } catch {
    // GIVE_UP, or anything unforeseen (a stack too deep…): the old way decides, with its own errors.
    return undefined;
  } finally {
    buf = EMPTY;
  }
  return { spans: out.spans, rejected: out.rejected, errors: out.errors };
}
