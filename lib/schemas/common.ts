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

export const idParam = intText({ min: 1 });
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
