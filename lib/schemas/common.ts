/** Building blocks of the wire format shared by every resource. */
import { z } from "zod";

/** Schemas whose OpenAPI form is an integer even though they arrive as text (path and query). */
export const integerTextSchemas = new WeakMap<z.ZodType, { minimum: number; maximum: number }>();

/** A path or query integer: digits only, within [min, max]; "abc", "-1", "1e3" and huge values are 400s. */
export function intText(opts: { min?: number; max?: number; label?: string } = {}) {
  const min = opts.min ?? 0;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  const schema = z
    .string()
    .trim()
    .regex(/^\d{1,16}$/, `must be an integer between ${min} and ${max}`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be an integer between ${min} and ${max}`);
  integerTextSchemas.set(schema, { minimum: min, maximum: max });
  return schema;
}

/**
 * Largest id either store can hold: PostgreSQL's integer ids stop at 2^31 − 1. Every id the API reads (path,
 * query, body, `metric.<id>` and `execution:<id>` in text) is bounded to [1, MAX_ID], so an id past it is a 400
 * on both stores instead of an integer-overflow 500 on PostgreSQL.
 */
export const MAX_ID = 2_147_483_647;

/** An id in a path or query (text). */
export const idText = () => intText({ min: 1, max: MAX_ID });

/** An id in a JSON body. */
export const bodyId = z.number().int(`must be an integer between 1 and ${MAX_ID}`).min(1, `must be an integer between 1 and ${MAX_ID}`).max(MAX_ID, `must be an integer between 1 and ${MAX_ID}`);

/** True when every number after `prefix` in the text is a possible id (`metric.12`, `execution:7`). */
export function idsInRange(text: string, prefix: RegExp): boolean {
  const re = new RegExp(`${prefix.source}(\\d+)`, "g");
  for (const m of text.matchAll(re)) if (Number(m[1]) < 1 || Number(m[1]) > MAX_ID) return false;
  return true;
}

export const idParam = idText();
export const idParams = z.object({ id: idParam });

export const paginationQuery = z.object({
  limit: intText({ min: 1, max: 500 }).optional().default(50).describe("Page size (1–500, default 50)"),
  offset: intText({ min: 0 }).optional().default(0).describe("Rows to skip (default 0)"),
});

/** JSON values exactly as given (meta objects, agents, tool calls). */
export const jsonValue: z.ZodType<unknown> = z.unknown();

export const isoTimestamp = z.string().describe("ISO 8601 UTC timestamp");

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })),
    }),
  })
  .meta({ id: "Error" });
