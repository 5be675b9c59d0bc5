/** The evaluated text matches a regular expression. */
import { z } from "zod";
import { compileUserPattern, MAX_PATTERN_LENGTH, patternProblem } from "@/lib/user-regex";
import { evaluatedText, show } from "./scope";
import type { CheckDefinition } from "./types";

const params = z
  .strictObject({
    pattern: z.string().min(1, "must not be empty").max(MAX_PATTERN_LENGTH).describe("Regular expression in RE2 syntax (no backreferences or lookaround)"),
    flags: z.string().regex(/^[imsu]*$/, "may only hold the flags i, m, s and u").optional().default(""),
  })
  .superRefine((p, ctx) => {
    const problem = patternProblem(p.pattern, p.flags);
    if (problem) ctx.addIssue({ code: "custom", path: ["pattern"], message: problem });
  });

export const textRegex: CheckDefinition<z.infer<typeof params>> = {
  type: "text_regex",
  label: "Text matches regex",
  description: "The evaluated text matches the regular expression.",
  levels: ["conversation", "message", "step"],
  appliesTo: ["output"],
  params,
  offLoop: true,
  run(p, ctx) {
    const { text, what } = evaluatedText(ctx);
    const shown = `/${p.pattern}/${p.flags}`;
    if (text === null) return { pass: false, reasoning: `${what} has no text to match against ${shown}.` };
    const match = compileUserPattern(p.pattern, p.flags).exec(text);
    return match
      ? { pass: true, reasoning: `${what} matches ${shown}: ${show(match[0])}.` }
      : { pass: false, reasoning: `${what} does not match ${shown}.` };
  },
};
