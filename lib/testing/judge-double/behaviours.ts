/**
 * Judge TEST DOUBLE — behaviour model.
 *
 * Nothing here talks to a language model. These are the scripted behaviours of
 * the OpenAI-compatible test double used by tests and demos, plus the
 * deterministic synthesis of a verdict that validates against whatever JSON
 * schema the caller sent, so the real `@ai-sdk/openai` client can be exercised
 * end-to-end without network access.
 */
import { seededRandom } from "@/lib/agreement/regression";
import { z } from "zod";

/** A behaviour's own latencyMs overrides the global latency for that one reply. */
export type Behaviour = { latencyMs?: number } &
  (
    | { kind: "verdict"; body: unknown }
    | { kind: "text"; content: string }
    /** The model asks for tools (`finish_reason: "tool_calls"`), as an agent's model does; arguments are JSON-encoded for it. */
    | { kind: "tool_calls"; calls: Array<{ id?: string; name: string; arguments: unknown }>; content?: string }
    | { kind: "rate_limit"; retryAfterSeconds?: number }
    | { kind: "server_error"; status?: number }
    | { kind: "http_error"; status: number; message?: string }
    | { kind: "hang" }
    | { kind: "malformed" }
    | { kind: "invalid_body" }
    | { kind: "default" }
    /** Scored from features of the prompt's text, deterministically (content.ts): verdicts that vary with what is judged. */
    | { kind: "content" }
  );

export type BehaviourKind = Behaviour["kind"];

export interface Rule {
  /** A string matches as a substring of the concatenated message contents. */
  match: string | RegExp;
  behaviour: Behaviour;
  /** How many requests the rule may answer; unlimited when absent. */
  times?: number;
}

export type FaultMix = Partial<Record<(typeof FAULT_KINDS)[number], number>>;

export type Latency = number | { min: number; max: number };

export const FAULT_KINDS = ["rate_limit", "server_error", "hang", "malformed"] as const;

export const DEFAULT_STRING = "reasoning from the judge test double";
export const DEFAULT_PLAIN_TEXT = "This is a plain-text reply from the judge test double.";
/** Truncated mid-string on purpose: parsers must fail on it, humans can still read it. */
export const MALFORMED_CONTENT = '{"score": 0.7, "reasoning": "cut off';
export const INVALID_BODY = "<html><body>502 upstream garbage from the judge test double{";
export const GENERIC_JSON_VERDICT = { score: 0.8, reasoning: DEFAULT_STRING };

// ---------------------------------------------------------------------------
// zod schemas for the admin HTTP endpoints (strict, so typos fail loudly)

const latencyMs = z.number().int().min(0).max(600_000).optional();

export const behaviourSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("verdict"), body: z.json(), latencyMs }),
  z.strictObject({ kind: z.literal("text"), content: z.string(), latencyMs }),
  z.strictObject({
    kind: z.literal("tool_calls"),
    calls: z.array(z.strictObject({ id: z.string().optional(), name: z.string().min(1), arguments: z.json() })).min(1),
    content: z.string().optional(),
    latencyMs,
  }),
  z.strictObject({ kind: z.literal("rate_limit"), retryAfterSeconds: z.number().min(0).max(3600).optional(), latencyMs }),
  z.strictObject({ kind: z.literal("server_error"), status: z.number().int().min(500).max(599).optional(), latencyMs }),
  z.strictObject({
    kind: z.literal("http_error"), status: z.number().int().min(400).max(599), message: z.string().optional(), latencyMs,
  }),
  z.strictObject({ kind: z.literal("hang"), latencyMs }),
  z.strictObject({ kind: z.literal("malformed"), latencyMs }),
  z.strictObject({ kind: z.literal("invalid_body"), latencyMs }),
  z.strictObject({ kind: z.literal("default"), latencyMs }),
  z.strictObject({ kind: z.literal("content"), latencyMs }),
]);

/** Admin endpoints accept one item or an array; preprocess (not a union) keeps error messages specific. */
function oneOrMany<T extends z.ZodType>(item: T) {
  return z.preprocess((v) => (Array.isArray(v) ? v : [v]), z.array(item));
}

export const behaviourListSchema = oneOrMany(behaviourSchema);

function isValidRegex(source: string, flags: string | undefined): boolean {
  try {
    return new RegExp(source, flags) instanceof RegExp;
  } catch {
    return false;
  }
}

const matchSchema = z.union(
  [
    z.string().min(1),
    z
      .strictObject({ regex: z.string().min(1), flags: z.string().optional() })
      .refine((m) => isValidRegex(m.regex, m.flags))
      .transform((m) => new RegExp(m.regex, m.flags)),
  ],
  { error: 'expected a non-empty substring or { "regex": "<valid pattern>", "flags"?: "i" }' },
);

export const ruleSchema = z.strictObject({
  match: matchSchema,
  behaviour: behaviourSchema,
  times: z.number().int().min(1).optional(),
});

export const ruleListSchema = oneOrMany(ruleSchema);

const probability = z.number().min(0).max(1).optional();

/** `seed` re-seeds the fault PRNG so a scripted run is reproducible from that point. */
export const faultsSchema = z
  .strictObject({ rate_limit: probability, server_error: probability, hang: probability, malformed: probability, seed: z.number().int().optional() })
  .refine((m) => FAULT_KINDS.reduce((sum, k) => sum + (m[k] ?? 0), 0) <= 1 + 1e-9, {
    message: "fault probabilities must sum to at most 1",
  })
  .nullable();

export const latencySchema = z.union([
  z.number().int().min(0).max(600_000),
  z
    .strictObject({ min: z.number().int().min(0), max: z.number().int().max(600_000) })
    .refine((l) => l.min <= l.max, { message: "min must be <= max" }),
]);

// ---------------------------------------------------------------------------
// Deterministic randomness

/** mulberry32 (lib/agreement's seeded generator): tiny, fast, and good enough for reproducible fault injection. */
export const mulberry32 = seededRandom;

/** Exactly one draw per call, so the sequence depends only on seed and request count. */
export function drawFault(mix: FaultMix, rand: () => number): Behaviour | undefined {
  const r = rand();
  let acc = 0;
  for (const kind of FAULT_KINDS) {
    acc += mix[kind] ?? 0;
    if (r < acc) return { kind };
  }
  return undefined;
}

export function pickLatency(latency: Latency, rand: () => number): number {
  if (typeof latency === "number") return latency;
  return Math.round(latency.min + rand() * (latency.max - latency.min));
}

// ---------------------------------------------------------------------------
// Prompt inspection

/** Concatenates message contents, including text parts of multi-part messages. */
export function messagesText(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  const out: string[] = [];
  for (const m of messages) {
    const content: unknown = isRecord(m) ? m.content : undefined;
    if (typeof content === "string") out.push(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (isRecord(part) && typeof part.text === "string") out.push(part.text);
      }
    }
  }
  return out.join("\n");
}

const MARKER = "[[judge-double:verdict";

/**
 * Finds `[[judge-double:verdict {...}]]`. A bracket-balanced scan (not a regex)
 * because verdict JSON may itself contain `]]`. The LAST valid marker wins so a
 * fixture's marker can override one baked into a metric's prompt template.
 */
export function findMarkerVerdict(text: string): { value: unknown } | undefined {
  let found: { value: unknown } | undefined;
  let from = 0;
  for (;;) {
    const at = text.indexOf(MARKER, from);
    if (at < 0) return found;
    from = at + MARKER.length;
    let start = from;
    while (start < text.length && /\s/.test(text[start])) start++;
    const end = scanJsonValueEnd(text, start);
    if (end < 0 || !text.startsWith("]]", skipSpace(text, end))) continue;
    try {
      found = { value: JSON.parse(text.slice(start, end)) };
    } catch {
      // Not JSON after all: ignore this marker rather than guess.
    }
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

function scanJsonValueEnd(text: string, start: number): number {
  const open = text[start];
  if (open !== "{" && open !== "[") return -1;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------
// JSON-schema-driven verdict synthesis

type SchemaObject = Record<string, unknown>;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

const MAX_DEPTH = 24;
/** Beyond this depth only required properties are filled, so recursive schemas terminate. */
const OPTIONAL_DEPTH = 3;

/**
 * How a synthesised verdict is filled (the `content` behaviour, content.ts): `quality` in [0, 1] places
 * every bounded number (lo + quality × (hi − lo)), makes booleans `quality >= 0.5`, and `reasoning`
 * fills the strings. Without it: 0.8 of every range, `true`, the default string.
 */
export type Fill = { quality: number; reasoning: string };

/** Produces a value that validates against `schema` (JSON Schema draft 4 – 2020-12 subset). */
export function synthesiseFromSchema(schema: unknown, fill?: Fill): unknown {
  return synth(schema, schema, 0, fill);
}

function synth(schema: unknown, root: unknown, depth: number, fill?: Fill): unknown {
  if (schema === true || schema === undefined) return fill?.reasoning ?? DEFAULT_STRING;
  if (!isRecord(schema) || depth > MAX_DEPTH) return null;
  if (typeof schema.$ref === "string") return synth(resolveRef(schema.$ref, root), root, depth + 1, fill);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      // Prefer a non-null branch: a verdict full of nulls is useless to read.
      const pick = options.find((o) => !(isRecord(o) && o.type === "null")) ?? options[0];
      return synth({ ...withoutKeys(schema, [key]), ...(isRecord(pick) ? pick : {}) }, root, depth + 1, fill);
    }
  }
  if (Array.isArray(schema.allOf)) {
    return synth(mergeAll(withoutKeys(schema, ["allOf"]), schema.allOf), root, depth + 1, fill);
  }
  switch (schemaType(schema)) {
    case "object":
      return synthObject(schema, root, depth, fill);
    case "array":
      return synthArray(schema, root, depth, fill);
    case "integer":
      return synthNumber(schema, true, fill);
    case "number":
      return synthNumber(schema, false, fill);
    case "boolean":
      return fill ? fill.quality >= 0.5 : true;
    case "null":
      return null;
    default:
      return synthString(schema, fill);
  }
}

function withoutKeys(schema: SchemaObject, keys: string[]): SchemaObject {
  const out: SchemaObject = { ...schema };
  for (const k of keys) delete out[k];
  return out;
}

function mergeAll(base: SchemaObject, parts: unknown[]): SchemaObject {
  const merged: SchemaObject = { ...base };
  for (const part of parts) {
    if (!isRecord(part)) continue;
    const props = { ...(isRecord(merged.properties) ? merged.properties : {}), ...(isRecord(part.properties) ? part.properties : {}) };
    const required = [
      ...(Array.isArray(merged.required) ? merged.required : []),
      ...(Array.isArray(part.required) ? part.required : []),
    ];
    Object.assign(merged, part, { properties: props, required });
  }
  return merged;
}

function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith("#")) return true;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    node = isRecord(node) ? node[key] : undefined;
  }
  return node ?? true;
}

function schemaType(schema: SchemaObject): string {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const nonNull = t.find((x) => x !== "null");
    return typeof nonNull === "string" ? nonNull : "null";
  }
  if (isRecord(schema.properties) || schema.required !== undefined) return "object";
  if (schema.items !== undefined || schema.prefixItems !== undefined) return "array";
  if (num(schema.minimum) !== undefined || num(schema.maximum) !== undefined) return "number";
  return "string";
}

function synthObject(schema: SchemaObject, root: unknown, depth: number, fill?: Fill): Record<string, unknown> {
  const props = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []);
  const out: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(props)) {
    if (required.has(key) || depth < OPTIONAL_DEPTH) out[key] = synth(sub, root, depth + 1, fill);
  }
  // Required-but-undeclared keys only exist when additionalProperties allows them.
  for (const key of required) {
    if (key in out) continue;
    const extra = schema.additionalProperties;
    out[key] = isRecord(extra) ? synth(extra, root, depth + 1, fill) : (fill?.reasoning ?? DEFAULT_STRING);
  }
  return out;
}

function synthArray(schema: SchemaObject, root: unknown, depth: number, fill?: Fill): unknown[] {
  const min = num(schema.minItems) ?? 0;
  const max = num(schema.maxItems) ?? Infinity;
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
  const itemSchema = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
  const wanted = depth >= OPTIONAL_DEPTH * 2 ? min : Math.max(1, min, prefix.length);
  const count = Math.min(wanted, max);
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) {
    if (i >= prefix.length && itemSchema === false) break;
    out.push(synth(i < prefix.length ? prefix[i] : itemSchema, root, depth + 1, fill));
  }
  return out;
}

function synthNumber(schema: SchemaObject, integer: boolean, fill?: Fill): number {
  // Draft 4 expresses exclusivity as booleans next to minimum/maximum; draft 6+ as numbers.
  let lo = num(schema.minimum);
  let hi = num(schema.maximum);
  let loEx = schema.exclusiveMinimum === true;
  let hiEx = schema.exclusiveMaximum === true;
  const exMin = num(schema.exclusiveMinimum);
  const exMax = num(schema.exclusiveMaximum);
  if (exMin !== undefined && (lo === undefined || exMin >= lo)) [lo, loEx] = [exMin, true];
  if (exMax !== undefined && (hi === undefined || exMax <= hi)) [hi, hiEx] = [exMax, true];
  const ok = (v: number) =>
    (lo === undefined || (loEx ? v > lo : v >= lo)) && (hi === undefined || (hiEx ? v < hi : v <= hi));

  const step = num(schema.multipleOf);
  const q = fill?.quality ?? 0.8;
  const target = lo !== undefined && hi !== undefined ? lo + q * (hi - lo) : integer ? (fill ? Math.round(1 + q * 4) : 1) : q;
  const candidates: number[] = [];
  if (step !== undefined && step > 0) {
    const decimals = (String(step).split(".")[1] ?? "").length;
    const base = Math.round(target / step);
    for (const k of [base, base + 1, base - 1, Math.ceil((lo ?? 0) / step), Math.floor((hi ?? 0) / step)]) {
      candidates.push(Number((k * step).toFixed(decimals)));
    }
  } else if (integer) {
    const intLo = lo === undefined ? -Infinity : loEx ? Math.floor(lo) + 1 : Math.ceil(lo);
    const intHi = hi === undefined ? Infinity : hiEx ? Math.ceil(hi) - 1 : Math.floor(hi);
    candidates.push(Math.min(Math.max(Math.round(target), intLo), intHi));
  } else {
    candidates.push(target);
    if (lo !== undefined) candidates.push(loEx ? lo + 1 : lo);
    if (hi !== undefined) candidates.push(hiEx ? hi - 1 : hi);
  }
  return candidates.find((c) => Number.isFinite(c) && ok(c) && (!integer || Number.isInteger(c))) ?? candidates[0];
}

const FORMAT_SAMPLES: Record<string, string> = {
  "date-time": "2024-01-01T00:00:00Z", date: "2024-01-01", time: "00:00:00", duration: "PT1S",
  email: "judge-double@example.com", uri: "https://example.com/judge-double", url: "https://example.com/judge-double",
  uuid: "00000000-0000-4000-8000-000000000000", ipv4: "127.0.0.1", ipv6: "::1", hostname: "example.com",
};

function synthString(schema: SchemaObject, fill?: Fill): string {
  let s = (typeof schema.format === "string" && FORMAT_SAMPLES[schema.format]) || fill?.reasoning || DEFAULT_STRING;
  const min = num(schema.minLength) ?? 0;
  const max = num(schema.maxLength);
  if (s.length < min) s = s + ".".repeat(min - s.length);
  if (max !== undefined && s.length > max) s = s.slice(0, max);
  return s;
}
