/** The rules a metric's reference obeys, checked when the metric is saved (422 with the reason). */
import type { EvaluationLevel, OutputType } from "@/lib/vocabulary";
import { AppError } from "@/lib/errors";
import type { MetricReference } from "@/lib/schemas/labels";

/** 422 unless the reference can be read at the metric's level and compared with its output type. */
export function assertReference(reference: MetricReference | null | undefined, metric: { evaluationLevel: EvaluationLevel; outputType: OutputType }): void {
  if (!reference || reference.source === "labels") return;
  const fail = (path: string, message: string) => {
    throw new AppError("unprocessable", `Invalid reference: ${message}`, [{ path: `reference.${path}`, message }]);
  };
  if (reference.level === "message" && metric.evaluationLevel === "conversation") {
    fail("level", "a conversation-level metric has no message to read meta from; use level conversation");
  }
  const rule = reference.rule;
  if (rule && [">=", ">", "<=", "<"].includes(rule.op) && typeof rule.value !== "number") {
    fail("rule.value", `must be a number with ${rule.op}`);
  }
  if (rule && metric.outputType === "text") {
    fail("rule", "a rule makes the reference pass/fail, which cannot be compared with a text metric's categories; omit it");
  }
}
