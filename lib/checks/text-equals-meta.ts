/** The evaluated text equals a meta field (an expected answer stored with the conversation or message). */
import { z } from "zod";
import { evaluatedText, readMeta, show } from "./scope";
import type { CheckDefinition } from "./types";

const params = z.strictObject({
  path: z.string().trim().min(1, "must not be empty").max(200).regex(/^[^.\s]+(\.[^.\s]+)*$/, "must be a dot path like meta.expected"),
  case_sensitive: z.boolean().optional().default(false),
  trim: z.boolean().optional().default(true),
});

export const textEqualsMeta: CheckDefinition<z.infer<typeof params>> = {
  type: "text_equals_meta",
  label: "Text equals meta field",
  description: "The evaluated text equals the value at a meta path (meta.expected, or conversation.meta.expected).",
  levels: ["conversation", "message", "step"],
  appliesTo: ["output"],
  params,
  run(p, ctx) {
    const { found, value } = readMeta(ctx, p.path);
    if (!found || value === null) return { pass: false, reasoning: `${p.path} is missing, nothing to compare with.` };
    const { text, what } = evaluatedText(ctx);
    const norm = (s: string) => {
      const t = p.trim ? s.trim() : s;
      return p.case_sensitive ? t : t.toLowerCase();
    };
    const expected = typeof value === "string" ? value : JSON.stringify(value);
    if (text === null) return { pass: false, reasoning: `${what} has no text; ${p.path} is ${show(expected)}.` };
    return norm(text) === norm(expected)
      ? { pass: true, reasoning: `${what} equals ${p.path} (${show(expected)}).` }
      : { pass: false, reasoning: `${what} is ${show(text)}, ${p.path} is ${show(expected)}.` };
  },
};
