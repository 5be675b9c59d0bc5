/** The evaluated text matches a regular expression. */
import { z } from "zod";
import { compiles, evaluatedText, show } from "./scope";
import type { CheckDefinition } from "./types";

const params = z
  .strictObject({
    pattern: z.string().min(1, "must not be empty").max(2000),
    flags: z.string().regex(/^[imsu]*$/, "may only hold the flags i, m, s and u").optional().default(""),
  })
  .refine((p) => compiles(p.pattern, p.flags), { path: ["pattern"], message: "is not a valid regular expression" });

export const textRegex: CheckDefinition<z.infer<typeof params>> = {
  type: "text_regex",
  label: "Text matches regex",
  description: "The evaluated text matches the regular expression.",
  levels: ["conversation", "message", "step"],
  appliesTo: ["output"],
  params,
  run(p, ctx) {
    const { text, what } = evaluatedText(ctx);
    const shown = `/${p.pattern}/${p.flags}`;
    if (text === null) return { pass: false, reasoning: `${what} has no text to match against ${shown}.` };
    const match = new RegExp(p.pattern, p.flags).exec(text);
    return match
      ? { pass: true, reasoning: `${what} matches ${shown}: ${show(match[0])}.` }
      : { pass: false, reasoning: `${what} does not match ${shown}.` };
  },
};
