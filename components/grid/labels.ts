/** Short names the grid shows for levels and output types (client-safe). */
import type { EvaluationLevel, OutputType } from "@/lib/vocabulary";

export const levelNames: Record<EvaluationLevel, string> = { conversation: "Conversation", message: "Message", step: "Step" };

/** The row's level in the grid's first column, where room is short. */
export const levelShortNames: Record<EvaluationLevel, string> = { conversation: "Conv", message: "Msg", step: "Step" };

export const outputTypeNames: Record<OutputType, string> = {
  progress: "Score 0–1",
  checkbox: "Pass / fail",
  number: "Number",
  text: "Text",
  json: "JSON",
  pairwise: "A or B",
};

export const levelTones: Record<EvaluationLevel, string> = {
  conversation: "bg-brand-50 text-brand-700 ring-brand-100",
  message: "bg-violet-50 text-violet-700 ring-violet-100",
  step: "bg-teal-50 text-teal-700 ring-teal-100",
};
