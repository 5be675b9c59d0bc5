/**
 * No tool result in the cell reports an error, read the ways tools actually report one (issue 51.1):
 * an error field (`error`, `errors`), an error flag (`is_error`/`isError` true, `success`/`ok` false), a
 * status (`status` "error", "failed", …), a non-zero exit code (`exit_code`, `returncode`, … also under
 * `metadata`), or a text result that starts with "Error:" or "Traceback". Which signals are read, the
 * statuses and the text prefixes are parameters; `path` adds a field of the user's own, and `pattern`
 * keeps only the errors whose value matches. A cell whose results carry none of the signals read says so:
 * a pass there means the check could not see, not that every call went well.
 */
import { z } from "zod";
import { compileUserPattern, patternProblem } from "@/lib/user-regex";
import { isRecord, readPath, renderResult, scopeSteps, show, whereOf } from "./scope";
import type { CheckDefinition } from "./types";

export const toolErrorSignals = ["error_field", "error_flag", "status", "exit_code", "error_text"] as const;
export type ToolErrorSignal = (typeof toolErrorSignals)[number];

export const DEFAULT_ERROR_STATUSES = ["error", "failed", "failure", "fail", "errored"];
export const DEFAULT_ERROR_PREFIXES = ["Error:", "Traceback"];

const ERROR_FIELDS = ["error", "errors"];
const ERROR_FLAGS_TRUE = ["is_error", "isError"];
const ERROR_FLAGS_FALSE = ["success", "ok"];
const EXIT_FIELDS = ["exit_code", "exitCode", "returncode", "return_code", "exit_status"];
const TEXT_FIELDS = ["content", "output", "text", "stderr"];

const params = z
  .strictObject({
    signals: z
      .array(z.enum(toolErrorSignals))
      .min(1)
      .max(toolErrorSignals.length)
      .optional()
      .default([...toolErrorSignals])
      .describe(
        "Which ways of reporting an error are read: error_field (`error`/`errors` set), error_flag (`is_error`/`isError` true, `success`/`ok` false), " +
          "status (`status` one of error_statuses), exit_code (`exit_code`, `exitCode`, `returncode`, `return_code`, `exit_status`, also under `metadata`, non-zero), " +
          "error_text (a text result, or its `content`/`output`/`text`/`stderr`, starting with one of error_prefixes). Default: all",
      ),
    error_statuses: z
      .array(z.string().trim().min(1).max(50))
      .max(20)
      .optional()
      .default(DEFAULT_ERROR_STATUSES)
      .describe("`status` values that mean an error (case-insensitive); default error, failed, failure, fail, errored"),
    error_prefixes: z
      .array(z.string().min(1).max(100))
      .max(20)
      .optional()
      .default(DEFAULT_ERROR_PREFIXES)
      .describe('How an error text begins (case-insensitive, leading spaces ignored); default "Error:" and "Traceback"'),
    path: z
      .string()
      .trim()
      .max(200)
      .optional()
      .describe("A dot path of your own in the tool result whose value, when set, is an error (beside the signals); empty for the whole result"),
    pattern: z
      .string()
      .max(500)
      .optional()
      .describe("Regular expression (case-insensitive, RE2 syntax: no backreferences or lookaround) an error's value must match to count"),
  })
  .superRefine((p, ctx) => {
    const problem = p.pattern === undefined ? null : patternProblem(p.pattern, "i");
    if (problem) ctx.addIssue({ code: "custom", path: ["pattern"], message: problem });
  });

type Params = z.infer<typeof params>;

function isSet(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return !(value === undefined || value === null || value === false || value === "" || value === 0);
}

/** JSON text (an object or a list) read as what it holds; other text as it is. */
function parsed(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const t = value.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[")) return value;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return value;
  }
}

const has = (o: Record<string, unknown>, key: string) => Object.hasOwn(o, key);

function exitCode(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && /^-?\d+$/.test(v.trim())) return Number(v.trim());
  return null;
}

/** What one result says: whether it carries a signal read, and the errors it reports (as text for the reasoning, and the value a pattern reads). */
function readResult(raw: unknown, p: Params, enabled: Set<ToolErrorSignal>, pathParts: string[] | null): { signalled: boolean; errors: Array<{ says: string; value: unknown }> } {
  const result = parsed(raw);
  const errors: Array<{ says: string; value: unknown }> = [];
  let signalled = false;
  const object = isRecord(result) ? result : null;
  if (object && enabled.has("error_field")) {
    for (const key of ERROR_FIELDS) {
      if (!has(object, key)) continue;
      signalled = true;
      if (isSet(object[key])) errors.push({ says: `${key} = ${show(object[key])}`, value: object[key] });
    }
  }
  if (object && enabled.has("error_flag")) {
    for (const key of ERROR_FLAGS_TRUE) {
      if (!has(object, key)) continue;
      signalled = true;
      if (object[key] === true || object[key] === "true") errors.push({ says: `${key} = true${describe(object)}`, value: errorValue(object) });
    }
    for (const key of ERROR_FLAGS_FALSE) {
      if (!has(object, key) || typeof object[key] !== "boolean") continue;
      signalled = true;
      if (object[key] === false) errors.push({ says: `${key} = false${describe(object)}`, value: errorValue(object) });
    }
  }
  if (object && enabled.has("status") && has(object, "status") && typeof object.status === "string") {
    signalled = true;
    const statuses = new Set(p.error_statuses.map((s) => s.toLowerCase()));
    if (statuses.has(object.status.trim().toLowerCase())) errors.push({ says: `status = ${show(object.status)}${describe(object)}`, value: errorValue(object) });
  }
  if (object && enabled.has("exit_code")) {
    const holders = [object, ...(isRecord(object.metadata) ? [object.metadata] : [])];
    for (const holder of holders) {
      for (const key of EXIT_FIELDS) {
        if (!has(holder, key)) continue;
        const code = exitCode(holder[key]);
        if (code === null) continue;
        signalled = true;
        if (code !== 0) errors.push({ says: `${holder === object ? "" : "metadata."}${key} = ${code}${describe(object)}`, value: errorValue(object) });
      }
    }
  }
  if (enabled.has("error_text")) {
    const texts = typeof result === "string" ? [result] : object ? TEXT_FIELDS.map((k) => object[k]).filter((v): v is string => typeof v === "string") : [];
    for (const text of texts) {
      signalled = true;
      const start = text.trimStart();
      const lower = start.toLowerCase();
      const prefix = p.error_prefixes.find((x) => lower.startsWith(x.toLowerCase()));
      if (prefix !== undefined) {
        errors.push({ says: `text starting ${show(start, 100)}`, value: start });
        break;
      }
    }
  }
  if (pathParts) {
    const { found, value } = readPath(result, pathParts);
    if (found) {
      signalled = true;
      const already = pathParts.length === 1 && enabled.has("error_field") && ERROR_FIELDS.includes(pathParts[0]);
      if (!already && isSet(value)) errors.push({ says: pathParts.length ? `${pathParts.join(".")} = ${show(value)}` : show(value), value });
    }
  }
  return { signalled, errors };
}

/** The message beside a flag, for the reasoning: `(error: "…")`, when the result carries one. */
function describe(o: Record<string, unknown>): string {
  for (const key of ["error", "message", "stderr", "content", "output"]) {
    if (typeof o[key] === "string" && o[key]) return ` (${key}: ${show(o[key], 100)})`;
  }
  return "";
}

/** The value a pattern reads for a flagged result: its message when it has one, else the whole result. */
function errorValue(o: Record<string, unknown>): unknown {
  for (const key of ["error", "message", "stderr", "content", "output"]) if (typeof o[key] === "string" && o[key]) return o[key];
  return o;
}

const signalWords: Record<ToolErrorSignal, string> = {
  error_field: "an error field",
  error_flag: "is_error/success flags",
  status: "a status",
  exit_code: "an exit code",
  error_text: "text",
};

export const toolError: CheckDefinition<Params> = {
  type: "tool_error",
  label: "Tool result error",
  description:
    'Fails when a tool result reports an error the way tools do: an `error` field, `is_error: true`, a `status` of "error"/"failed", a non-zero exit code, ' +
    'or a text result starting "Error:" or "Traceback" (each configurable). Says so when the results carry none of these signals.',
  levels: ["conversation", "message", "step"],
  appliesTo: ["tool_result"],
  params,
  offLoop: true,
  run(p, ctx) {
    const regex = p.pattern !== undefined ? compileUserPattern(p.pattern, "i") : null;
    const pathParts = p.path === undefined ? null : p.path ? p.path.split(".") : [];
    const enabled = new Set(p.signals);
    const errors: string[] = [];
    let results = 0;
    let signalled = 0;
    for (const s of scopeSteps(ctx)) {
      if (s.step.toolResult === null || s.step.toolResult === undefined) continue;
      results++;
      const read = readResult(s.step.toolResult, p, enabled, pathParts);
      if (read.signalled) signalled++;
      const reported = regex ? read.errors.filter((e) => regex.test(renderResult(e.value))) : read.errors;
      if (reported.length) errors.push(`${ctx.level === "step" ? "the tool result" : `tool result at ${whereOf(s)}`} reports ${reported.map((e) => e.says).join(", ")}`);
    }
    if (errors.length) return { pass: false, reasoning: `${errors.join("; ")}.` };
    if (results === 0) return { pass: true, reasoning: "No tool result to check." };
    const read = [...enabled].map((s) => signalWords[s]).join(", ") + (p.path !== undefined ? `, '${p.path}'` : "");
    if (signalled === 0) {
      return {
        pass: true,
        reasoning:
          `${results === 1 ? "The tool result carries" : `None of the ${results} tool results carries`} any signal this check reads (${read}), ` +
          "so it cannot tell whether a call failed: set path (and pattern) to where these tools report errors.",
      };
    }
    const unread = results - signalled;
    return {
      pass: true,
      reasoning:
        `${results === 1 ? "The tool result reports no error" : `None of ${results} tool results reports an error`} (read: ${read}${regex ? `; errors matching /${p.pattern}/i` : ""})` +
        `${unread > 0 ? `; ${unread} of them carr${unread === 1 ? "ies" : "y"} none of these signals` : ""}.`,
    };
  },
};
