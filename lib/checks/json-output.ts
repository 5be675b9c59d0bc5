/**
 * JSON checks: the evaluated output is valid JSON, or JSON matching a JSON Schema. A step's
 * `output_structured` is used as is; text is parsed (a ```json fence around it is allowed).
 */
import type { ErrorObject } from "ajv";
import { z } from "zod";
import { userSchemaValidator } from "@/lib/user-json-schema";
import { evaluatedText, isRecord } from "./scope";
import type { CheckContext, CheckDefinition } from "./types";

/**
 * The text inside a ```json … ``` fence around the whole output, else the text. Written without a
 * regular expression: the pattern it replaced backtracked (a fence followed by 400,000 newlines held the
 * event loop 48 s). JSON.parse ignores the whitespace left around the body.
 */
export function withoutFence(text: string): string {
  const t = text.trim();
  if (t.length < 6 || !t.startsWith("```") || !t.endsWith("```")) return t;
  const inside = t.slice(3, -3);
  return inside.slice(0, 4).toLowerCase() === "json" ? inside.slice(4) : inside;
}

type Parsed = { ok: true; value: unknown; what: string } | { ok: false; reason: string };

function parseOutput(ctx: CheckContext): Parsed {
  if (ctx.level === "step" && ctx.step && ctx.step.outputStructured != null && (ctx.step.outputContent ?? "") === "") {
    return { ok: true, value: ctx.step.outputStructured, what: "the step's structured output" };
  }
  const { text, what } = evaluatedText(ctx);
  if (text === null) return { ok: false, reason: `${what} is empty, not JSON` };
  const body = withoutFence(text);
  try {
    return { ok: true, value: JSON.parse(body) as unknown, what };
  } catch (error) {
    return { ok: false, reason: `${what} is not valid JSON: ${(error as Error).message}` };
  }
}

export const validJson: CheckDefinition<Record<string, never>> = {
  type: "valid_json",
  label: "Valid JSON",
  description: "The evaluated output parses as JSON (a step's structured output always does).",
  levels: ["conversation", "message", "step"],
  appliesTo: ["output"],
  params: z.strictObject({}),
  offLoop: true,
  run(_p, ctx) {
    const parsed = parseOutput(ctx);
    return parsed.ok ? { pass: true, reasoning: `${parsed.what} is valid JSON.` } : { pass: false, reasoning: `${parsed.reason}.` };
  },
};

/** Null when ajv compiles the schema (its patterns on RE2), else why not. */
function schemaProblem(schema: Record<string, unknown>): string | null {
  const validate = userSchemaValidator(schema);
  return validate instanceof Error ? validate.message : null;
}

function describeError(e: ErrorObject): string {
  return `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}`;
}

const params = z
  .strictObject({ schema: z.record(z.string(), z.unknown()).describe("The JSON Schema the output must match") })
  .superRefine((p, ctx) => {
    const problem = isRecord(p.schema) ? schemaProblem(p.schema) : "must be an object";
    if (problem) ctx.addIssue({ code: "custom", path: ["schema"], message: `is not a valid JSON Schema: ${problem}` });
  });

export const jsonSchema: CheckDefinition<z.infer<typeof params>> = {
  type: "json_schema",
  label: "JSON matches schema",
  description: "The evaluated output (a step's structured output too) is JSON matching the JSON Schema.",
  levels: ["conversation", "message", "step"],
  appliesTo: ["output"],
  params,
  offLoop: true,
  run(p, ctx) {
    const parsed = parseOutput(ctx);
    if (!parsed.ok) return { pass: false, reasoning: `${parsed.reason}.` };
    const validate = userSchemaValidator(p.schema);
    // Saved schemas were checked on save; one that no longer compiles (e.g. a pattern RE2 refuses) fails its cells.
    if (validate instanceof Error) return { pass: false, reasoning: `The JSON Schema is not valid: ${validate.message}.` };
    if (validate(parsed.value)) return { pass: true, reasoning: `${parsed.what} matches the JSON Schema.` };
    const errors = (validate.errors ?? []).slice(0, 5).map(describeError);
    return { pass: false, reasoning: `${parsed.what} does not match the JSON Schema: ${errors.join("; ")}.` };
  },
};
