/**
 * The few-shot strategy, pure: which labelled cells become examples (disagreements between the judge and
 * the truth first, the classes balanced, at most `max`), and the marked section they are written into the
 * prompt as. The caller passes only cells of the training folds, so a cell is never judged with itself or
 * with a cell of its own held-out fold as an example (lib/align/align.test.ts proves it).
 */
import { seededRandom } from "@/lib/agreement/regression";
import { seededShuffle } from "./folds";

/** The line that opens the examples section (the judge double looks for it; a promoted prompt keeps it). */
export const EXAMPLES_BEGIN = "=== Examples with their verdicts (alignment) ===";
/** The opening line sections written before said (prompts promoted then still hold it): stripped as well. */
const EARLIER_BEGIN = "=== Examples labelled by people (alignment) ===";
export const EXAMPLES_END = "=== End of examples ===";
/** How much of a cell's text an example quotes (the end of it: where a reply's outcome is). */
export const EXAMPLE_CHARS = 1200;

export type ExampleCandidate = { index: number; truth: string; disagreement: boolean };

/**
 * The indices of the chosen examples: classes taken in turn (sorted), each class offering its
 * disagreements first and then its agreements, each group in a seeded order; at most `max` in all.
 */
export function selectExamples(candidates: readonly ExampleCandidate[], opts: { max: number; seed: number }): number[] {
  const random = seededRandom(opts.seed);
  const classes = [...new Set(candidates.map((c) => c.truth))].sort();
  const queues = classes.map((cls) => {
    const mine = candidates.filter((c) => c.truth === cls);
    return [...seededShuffle(mine.filter((c) => c.disagreement), random), ...seededShuffle(mine.filter((c) => !c.disagreement), random)].map((c) => c.index);
  });
  const out: number[] = [];
  while (out.length < opts.max && queues.some((q) => q.length > 0)) {
    for (const q of queues) {
      if (out.length >= opts.max) break;
      const next = q.shift();
      if (next !== undefined) out.push(next);
    }
  }
  return out;
}

/**
 * A cell's text as an example quotes it: the last EXAMPLE_CHARS characters, with `@` written as a full-width
 * ＠ so a quoted `@HISTORY` is never read as a template variable, and the section's own marker lines defused.
 */
export function exampleText(text: string): string {
  const tail = text.length > EXAMPLE_CHARS ? `…${text.slice(text.length - EXAMPLE_CHARS)}` : text;
  return tail.replaceAll("@", "＠").replaceAll("===", "= = =").replace(/^Verdict:/gm, "Verdict -");
}

/** What the section says its verdicts are: people's labels, or the reference's outcome when that is the truth. */
const whose = {
  labels: "Cells people labelled, with the verdict they gave",
  reference: "Cells with the verdict their reference gives (the recorded outcome, not a person's label)",
} as const;

/** The marked examples section: each example's text, then its verdict as the metric's result would hold it. */
export function examplesSection(examples: ReadonlyArray<{ text: string; verdict: unknown }>, source: keyof typeof whose = "labels"): string {
  const body = examples.map((e, i) => `--- Example ${i + 1} ---\n${exampleText(e.text)}\nVerdict: ${JSON.stringify(e.verdict)}`).join("\n");
  return `${EXAMPLES_BEGIN}\n${whose[source]}; judge the item below the same way.\n${body}\n${EXAMPLES_END}`;
}

/** The prompt without its examples section (a prompt aligned before gets new examples, not two sets). */
export function stripExamples(prompt: string): string {
  const found = prompt.indexOf(EXAMPLES_BEGIN);
  const start = found >= 0 ? found : prompt.indexOf(EARLIER_BEGIN);
  if (start < 0) return prompt;
  const end = prompt.indexOf(EXAMPLES_END, start);
  const before = prompt.slice(0, start).trim();
  const after = end < 0 ? "" : prompt.slice(end + EXAMPLES_END.length).trim();
  return [before, after].filter(Boolean).join("\n\n");
}

/** The rubric with the examples section put before it (the judged item's evidence follows the rubric). */
export function withExamples(prompt: string, section: string): string {
  return `${section}\n\n${stripExamples(prompt)}`;
}
