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

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, addUsedSchema: false, code: { regExp: re2RegExpEngine } });
  addFormats(ajv);
  return ajv;
}

let ajv: Ajv2020 | null = null;
const compiled = new Map<string, ValidateFunction | Error>();

/** The validator of a user's schema, or the Error saying why it does not compile (patterns included). */
export function userSchemaValidator(schema: Record<string, unknown>): ValidateFunction | Error {
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
