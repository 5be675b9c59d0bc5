/**
 * One comparable reading per cell from each kind of source: a judge result, a human label, or a meta
 * field through the metric's reference. Checkbox metrics read pass/fail, text metrics a category, every
 * other output type a score (progress score, number value, json `score`). No reading: the cell is left
 * out of the comparison.
 */
import type { OutputType } from "@/lib/vocabulary";
import type { Reading } from "@/lib/agreement";
import type { MetricReference } from "@/lib/schemas/labels";

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** A saved judge result's reading; failed cells have none. */
export function readingOfResult(outputType: OutputType, r: { status: string; result: unknown; score: number | null }): Reading | undefined {
  if (r.status !== "completed") return undefined;
  if (outputType === "checkbox") {
    if (isObject(r.result) && typeof r.result.value === "boolean") return r.result.value;
    return r.score === 1 ? true : r.score === 0 ? false : undefined;
  }
  if (outputType === "text") return isObject(r.result) && typeof r.result.value === "string" ? r.result.value : undefined;
  return finite(r.score) ? r.score : undefined;
}

/** A label value's reading (the value as the metric's result would hold it). */
export function readingOfLabelValue(outputType: OutputType, value: unknown): Reading | undefined {
  if (value === null || value === undefined) return undefined;
  if (outputType === "checkbox") return typeof value === "boolean" ? value : undefined;
  if (outputType === "text") return typeof value === "string" ? value : undefined;
  if (outputType === "json") return isObject(value) && finite(value.score) ? value.score : undefined;
  return finite(value) ? value : undefined;
}

/** The numeric score stored with a label, as a result's score column holds it. */
export function labelScore(outputType: OutputType, value: unknown): number | null {
  const reading = readingOfLabelValue(outputType, value);
  if (typeof reading === "boolean") return reading ? 1 : 0;
  return typeof reading === "number" ? reading : null;
}

/** A meta field as a JS value from SQLite's json_extract/json_type; objects and arrays are not readings. */
export function metaValue(value: number | string | null, jsonType: string | null): boolean | number | string | undefined {
  switch (jsonType) {
    case "true":
      return true;
    case "false":
      return false;
    case "integer":
    case "real":
      return Number(value);
    case "text":
      return String(value);
    default:
      return undefined;
  }
}

type Rule = NonNullable<Extract<MetricReference, { source: "meta" }>["rule"]>;

/** Whether `field <op> value` holds; ordering needs two numbers, equality compares typed values. */
export function ruleHolds(rule: Rule, field: boolean | number | string): boolean {
  const { op, value } = rule;
  if (op === "==") return field === value;
  if (op === "!=") return field !== value;
  if (typeof field !== "number" || typeof value !== "number") return false;
  if (op === ">=") return field >= value;
  if (op === ">") return field > value;
  if (op === "<=") return field <= value;
  return field < value;
}

/** A meta reference's reading: pass/fail through its rule, else the field itself read for the output type. */
export function readingOfMeta(
  reference: Extract<MetricReference, { source: "meta" }>,
  outputType: OutputType,
  field: boolean | number | string | undefined,
): Reading | undefined {
  if (field === undefined) return undefined;
  // With a rule the reference is pass/fail, compared with a score metric at the agreement's threshold.
  if (reference.rule) return ruleHolds(reference.rule, field);
  if (outputType === "checkbox") {
    if (typeof field === "boolean") return field;
    return field === 1 ? true : field === 0 ? false : undefined;
  }
  if (outputType === "text") return String(field);
  if (typeof field === "boolean") return field ? 1 : 0;
  return typeof field === "number" ? field : undefined;
}
