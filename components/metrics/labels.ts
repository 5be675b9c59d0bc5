/** Names the metric pages show for levels and output types (client-safe: no server imports). */
import type { EvaluationLevel, OutputType } from "@/lib/vocabulary";
import { levelNames, outputTypeNames } from "@/components/grid/labels";

export const levels = ["conversation", "message", "step"] as const satisfies readonly EvaluationLevel[];
export const outputTypeList = ["progress", "checkbox", "number", "text", "json", "pairwise"] as const satisfies readonly OutputType[];

/** One name per level and per output type on every page: the grid's (components/grid/labels.ts). */
export const levelLabels = levelNames;
export const outputTypeLabels = outputTypeNames;

export const levelHints: Record<EvaluationLevel, string> = {
  conversation: "One judgement per conversation",
  message: "One judgement per assistant message",
  step: "One judgement per agent step",
};

/** What a basic-mode prompt (no variables) is given, per level — mirrors lib/metrics/resolve.ts. */
export const defaultContextHints: Record<EvaluationLevel, string> = {
  conversation: "the whole transcript",
  message: "the conversation before the message, and the message with its steps",
  step: "the user message being answered, the message, and the step",
};
