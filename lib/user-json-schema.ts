/**
 * JSON Schemas written by users (the json_schema check, a metric's output_schema), compiled with ajv.
 * Patterns inside them run on RE2 (lib/user-regex.ts). A schema is never registered on the shared ajv
 * instance (`addUsedSchema: false`): a schema with `$id` compiled twice, or two schemas sharing an
 * `$id`, used to fail with "already exists" until restart. Validators are cached by the schema's content.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { re2RegExpEngine } from "./user-regex";

const MAX_CACHED = 200;

/**
 * Limits checked before ajv sees a schema: compiling generates and evaluates code in proportion to the
 * schema (a 169 KB schema of 3,000 patterns held its request 9.2 s; a deeply nested one overflowed the
 * stack after 53 s). Documented in docs/configuration.md ("Limits").
 */
export const USER_SCHEMA_LIMITS = { bytes: 32 * 1024, depth: 32, patterns: 100 } as const;

/** Why a schema is past the limits, walked without recursion (so depth cannot overflow the stack); null when within. */
export function userSchemaTooLarge(schema: unknown): string | null {
  let size = 0;
  let patterns = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value: schema, depth: 1 }];
  while (stack.length) {
    const { value, depth } = stack.pop()!;
    if (typeof value === "string") size += value.length + 2;
    else if (value === null || typeof value !== "object") size += String(value).length;
    else {
      if (depth > USER_SCHEMA_LIMITS.depth) return `is nested more than ${USER_SCHEMA_LIMITS.depth} levels deep`;
      const isArray = Array.isArray(value);
      for (const [key, item] of Object.entries(value)) {
        size += isArray ? 1 : key.length + 4;
        if (!isArray && (key === "pattern" || key === "patternProperties")) patterns += key === "pattern" ? 1 : Object.keys((item as object) ?? {}).length;
        stack.push({ value: item, depth: depth + 1 });
      }
    }
    if (size > USER_SCHEMA_LIMITS.bytes) return `is larger than ${USER_SCHEMA_LIMITS.bytes / 1024} KB (as JSON)`;
  }
  if (patterns > USER_SCHEMA_LIMITS.patterns) return `has ${patterns} patterns, more than ${USER_SCHEMA_LIMITS.patterns}`;
  return null;
}

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, addUsedSchema: false, code: { regExp: re2RegExpEngine } });
  addFormats(ajv);
  return ajv;
}

let ajv: Ajv2020 | null = null;
const compiled = new Map<string, ValidateFunction | Error>();

/** The validator of a user's schema, or the Error saying why it does not compile (patterns included). */
export function userSchemaValidator(schema: Record<string, unknown>): ValidateFunction | Error {
  const tooLarge = userSchemaTooLarge(schema);
  if (tooLarge) return new Error(`the schema ${tooLarge}`);
  const key = JSON.stringify(schema);
  let found = compiled.get(key);
  if (found) return found;
  if (!ajv || compiled.size >= MAX_CACHED) {
    // ajv keeps every compiled schema object; a fresh instance lets them go with the cache.
    compiled.clear();
    ajv = newAjv();
  }
  try {
    found = ajv.compile(structuredClone(schema));
  } catch (error) {
    found = error instanceof Error ? error : new Error(String(error));
  }
  compiled.set(key, found);
  return found;
}
