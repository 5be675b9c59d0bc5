/**
 * A number read from meta stays within a budget: `meta.latency_ms <= 2000`. With `aggregate` at
 * conversation or message level, the value is summed (or maxed) over the messages in the cell.
 */
import { z } from "zod";
import { readMeta, show } from "./scope";
import type { CheckContext, CheckDefinition } from "./types";

const operators = ["<=", "<", ">=", ">", "==", "!="] as const;
const compare: Record<(typeof operators)[number], (a: number, b: number) => boolean> = {
  "<=": (a, b) => a <= b,
  "<": (a, b) => a < b,
  ">=": (a, b) => a >= b,
  ">": (a, b) => a > b,
  "==": (a, b) => a === b,
  "!=": (a, b) => a !== b,
};

const params = z.strictObject({
  path: z.string().trim().min(1, "must not be empty").max(200).regex(/^[^.\s]+(\.[^.\s]+)*$/, "must be a dot path like meta.latency_ms"),
  op: z.enum(operators).optional().default("<="),
  value: z.number().refine(Number.isFinite, "must be a finite number"),
  aggregate: z.enum(["none", "sum", "max"]).optional().default("none").describe("sum or max the path over the cell's messages"),
});
type Params = z.infer<typeof params>;

function valuesOf(p: Params, ctx: CheckContext): { values: number[]; missing: boolean; bad?: unknown } {
  if (p.aggregate === "none" || ctx.level === "step") {
    const { found, value } = readMeta(ctx, p.path);
    if (!found || value === null) return { values: [], missing: true };
    return typeof value === "number" ? { values: [value], missing: false } : { values: [], missing: false, bad: value };
  }
  const messages = ctx.level === "message" && ctx.message ? [ctx.message] : ctx.tree.messages;
  const values: number[] = [];
  for (const m of messages) {
    const { found, value } = readMeta({ ...ctx, level: "message", message: m }, p.path);
    if (found && typeof value === "number") values.push(value);
  }
  return { values, missing: values.length === 0 };
}

export const metaBudget: CheckDefinition<Params> = {
  type: "meta_budget",
  label: "Meta budget",
  description: "A number in meta (latency, tokens, cost) compared with a budget, e.g. meta.latency_ms <= 2000; optionally summed or maxed over the messages.",
  levels: ["conversation", "message", "step"],
  params,
  run(p, ctx) {
    const { values, missing, bad } = valuesOf(p, ctx);
    if (bad !== undefined) return { pass: false, reasoning: `${p.path} is ${show(bad)}, not a number.` };
    if (missing) return { pass: false, reasoning: `${p.path} is missing${p.aggregate !== "none" ? " on every message" : ""}.` };
    const actual = p.aggregate === "max" ? Math.max(...values) : values.reduce((a, b) => a + b, 0);
    const label = p.aggregate === "none" || ctx.level === "step" ? p.path : `${p.aggregate} of ${p.path} over ${values.length} message${values.length === 1 ? "" : "s"}`;
    const ok = compare[p.op](actual, p.value);
    return { pass: ok, reasoning: `${label} = ${actual}, ${ok ? "within" : "breaks"} the budget ${p.op} ${p.value}.` };
  },
};
