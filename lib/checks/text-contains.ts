/** The evaluated text contains (or does not contain) a string. */
import { z } from "zod";
import { evaluatedText, show } from "./scope";
import type { CheckContext, CheckDefinition, CheckVerdict } from "./types";

const params = z.strictObject({
  value: z.string().min(1, "must not be empty").max(5000),
  case_sensitive: z.boolean().optional().default(false),
});
type Params = z.infer<typeof params>;

function find(p: Params, ctx: CheckContext): { text: string | null; what: string; index: number } {
  const { text, what } = evaluatedText(ctx);
  if (text === null) return { text, what, index: -1 };
  const index = p.case_sensitive ? text.indexOf(p.value) : text.toLowerCase().indexOf(p.value.toLowerCase());
  return { text, what, index };
}

function excerpt(text: string, index: number, length: number): string {
  const from = Math.max(0, index - 30);
  return `${from > 0 ? "…" : ""}${text.slice(from, index + length + 30)}${index + length + 30 < text.length ? "…" : ""}`;
}

const levels = ["conversation", "message", "step"] as const;

export const textContains: CheckDefinition<Params> = {
  type: "text_contains",
  label: "Text contains",
  description: "The evaluated text (step output, message, or the conversation's last assistant message) contains the value.",
  levels,
  appliesTo: ["output"],
  params,
  run(p, ctx): CheckVerdict {
    const { text, what, index } = find(p, ctx);
    if (text === null) return { pass: false, reasoning: `${what} has no text to search for ${show(p.value)}.` };
    return index >= 0
      ? { pass: true, reasoning: `${what} contains ${show(p.value)}: ${show(excerpt(text, index, p.value.length), 120)}.` }
      : { pass: false, reasoning: `${what} does not contain ${show(p.value)}${p.case_sensitive ? " (case-sensitive)" : ""}.` };
  },
};

export const textNotContains: CheckDefinition<Params> = {
  type: "text_not_contains",
  label: "Text does not contain",
  description: "The evaluated text does not contain the value.",
  levels,
  appliesTo: ["output"],
  params,
  run(p, ctx): CheckVerdict {
    const { text, what, index } = find(p, ctx);
    if (text === null || index < 0) return { pass: true, reasoning: `${what} does not contain ${show(p.value)}.` };
    return { pass: false, reasoning: `${what} contains ${show(p.value)} at character ${index + 1}: ${show(excerpt(text, index, p.value.length), 120)}.` };
  },
};
