/** One result as a flat export row (CSV and XLSX share the columns), and formula-injection defence. */
import type { EvaluationResultRow } from "@/db/schema";
import { isRecord, type OutputType } from "@/lib/vocabulary";

export const EXPORT_COLUMNS = [
  "result_id",
  "execution_id",
  "metric_id",
  "metric_name",
  "output_type",
  "entity_type",
  "entity_id",
  "conversation_id",
  "conversation_name",
  "message_id",
  "step_id",
  "status",
  "score",
  "value",
  "reasoning",
  "result_json",
  "error",
  "model_name",
  "input_tokens",
  "output_tokens",
  "execution_time_ms",
  "cached",
  "created_at",
] as const;

export type ExportColumn = (typeof EXPORT_COLUMNS)[number];
export type ExportCell = string | number | boolean | null;
export type ExportRecord = Record<ExportColumn, ExportCell>;
export type MetricInfo = { name: string; outputType: OutputType };

// Spreadsheet programs read a cell starting with one of these as a formula (or strip the tab / CR
// first and then do). The same set csv-stringify's `escape_formulas` guards, fullwidth forms included.
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** Prefix `'` to a string a spreadsheet would otherwise run as a formula (OWASP "CSV injection"). */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** Re-exported for this module's readers (one definition: lib/vocabulary.ts). */
export { isRecord };

/** Output types whose verdict carries a `value` (checkbox bool, number, text). */
const VALUE_TYPES: ReadonlySet<OutputType> = new Set(["checkbox", "number", "text"]);

/** The verdict's `value` for checkbox, number and text metrics (objects as JSON text); null otherwise. */
export function verdictValue(result: unknown, outputType: OutputType | undefined): ExportCell {
  if (!isRecord(result) || !outputType || !VALUE_TYPES.has(outputType)) return null;
  const v = result.value;
  if (v === undefined || v === null) return null;
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  return JSON.stringify(v);
}

/** What the grid export calls a conversation: its name, else `Conversation <position + 1>`. */
export function exportConversationName(c: { name: string | null; position: number } | undefined): string | null {
  if (!c) return null;
  return c.name?.trim() ? c.name : `Conversation ${c.position + 1}`;
}

/** A result as an export row; the metric is looked up by the caller once per execution, the conversation's name once per page. */
export function toExportRecord(row: EvaluationResultRow, metric: MetricInfo | undefined, conversationName: string | null = null): ExportRecord {
  const result = row.result ?? null;
  const reasoning = isRecord(result) && typeof result.reasoning === "string" ? result.reasoning : null;
  return {
    result_id: row.id,
    execution_id: row.executionId,
    metric_id: row.pipelineNodeId,
    metric_name: metric?.name ?? null,
    output_type: metric?.outputType ?? null,
    entity_type: row.entityType,
    entity_id: row.entityId,
    conversation_id: row.conversationId,
    conversation_name: conversationName,
    message_id: row.messageId,
    step_id: row.stepId,
    status: row.status,
    score: row.score,
    value: verdictValue(result, metric?.outputType),
    reasoning,
    result_json: result === null ? null : JSON.stringify(result),
    error: row.error,
    model_name: row.modelName,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    execution_time_ms: row.executionTime,
    cached: row.cached,
    created_at: row.createdAt,
  };
}
