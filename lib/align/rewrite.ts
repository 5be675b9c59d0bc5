/**
 * The rewrite strategy: an optimiser model (the alignment's `optimizer_model`, default the judge model)
 * is shown the rubric, the cells where the judge and the truth disagreed and the notes people left, and
 * asked for a better rubric. Its call goes through the same judge client (counted, cached, budgeted).
 */
import "server-only";
import { judge } from "@/lib/judge";
import { checkPromptVariables, extractVariables } from "@/lib/metrics/variables";
import { stripExamples } from "./few-shot";
import type { JudgeContext } from "./judging";

/** Disagreements the optimiser is shown at most, and how much of each cell it quotes. */
export const REWRITE_DISAGREEMENTS = 20;
const QUOTE_CHARS = 600;

export type RewriteCase = { text: string; truth: string; judged: string | null; notes: string[] };

const OPTIMIZER_SYSTEM =
  "You improve the rubric an LLM judge follows. You are given the current rubric, cases where the judge's verdict differed from " +
  "the people's verdict, and notes people wrote. Return a rubric that would have judged those cases as people did, stays general " +
  "(never names a case) and keeps every @VARIABLE of the current rubric where the evidence belongs. Reply with JSON: {\"rubric\": \"…\"}.";

const RUBRIC_SCHEMA = { type: "object", properties: { rubric: { type: "string", description: "The improved rubric, complete" } }, required: ["rubric"], additionalProperties: false };

/** The optimiser's prompt: the rubric, then the disagreements (the end of each cell quoted) and the notes. */
export function rewritePrompt(rubric: string, cases: readonly RewriteCase[]): string {
  const shown = cases.slice(0, REWRITE_DISAGREEMENTS);
  const body = shown
    .map((c, i) => {
      const quote = c.text.length > QUOTE_CHARS ? `…${c.text.slice(c.text.length - QUOTE_CHARS)}` : c.text;
      const notes = c.notes.length ? `\nPeople's notes: ${c.notes.join(" | ")}` : "";
      return `Case ${i + 1}\n${quote.replaceAll("@", "＠")}\nPeople said: ${c.truth}; the judge said: ${c.judged ?? "(no verdict)"}${notes}`;
    })
    .join("\n\n");
  return `Current rubric:\n<<<\n${stripExamples(rubric)}\n>>>\n\nDisagreements (${shown.length} of ${cases.length}):\n\n${body || "(none)"}`;
}

/**
 * The rewritten rubric, or an error saying why there is none (the optimiser failed, or its rubric uses
 * variables the metric's level does not have).
 */
export async function rewriteRubric(ctx: JudgeContext, optimizerModel: string, rubric: string, cases: readonly RewriteCase[]): Promise<{ rubric: string } | { error: string }> {
  const outcome = await ctx.spend.call("optimizer", () =>
    judge({ model: optimizerModel, system: OPTIMIZER_SYSTEM, prompt: rewritePrompt(rubric, cases), outputType: "json", outputSchema: RUBRIC_SCHEMA, signal: ctx.signal }, ctx.deps),
  );
  const text = outcome.status === "completed" && typeof outcome.result?.rubric === "string" ? outcome.result.rubric.trim() : "";
  if (!text) return { error: `the optimiser (${optimizerModel}) gave no rubric: ${outcome.error ?? "an empty rubric"}` };
  const { invalid } = checkPromptVariables(text, ctx.node.evaluationLevel);
  if (invalid.length) return { error: `the optimiser's rubric uses variables a ${ctx.node.evaluationLevel} metric does not have: ${invalid.join(", ")}` };
  const lost = lostVariables(rubric, text);
  if (lost.length) return { error: lostMessage(lost) };
  return { rubric: text };
}

/**
 * The variables of the original rubric a rewrite left out (issue 51.3): each is evidence the judge is
 * shown (`@HISTORY` is the conversation), so a rubric without one judges without it and is no candidate.
 */
export function lostVariables(original: string, rewritten: string): string[] {
  const kept = new Set(extractVariables(stripExamples(rewritten)));
  return extractVariables(stripExamples(original)).filter((v) => !kept.has(v));
}

export const lostMessage = (lost: readonly string[]) =>
  `the optimiser's rubric lost ${lost.join(", ")}, which the metric's prompt uses: the judge would not see ${lost.length === 1 ? "it" : "them"}, so it is no candidate`;
