/** None of the listed tools was called. */
import { z } from "zod";
import { toolNames } from "./required-tools";
import { list, scopeToolCalls } from "./scope";
import type { CheckDefinition } from "./types";

const params = z.strictObject({ tools: toolNames });

export const forbiddenTools: CheckDefinition<z.infer<typeof params>> = {
  type: "forbidden_tools",
  label: "Forbidden tools",
  description: "None of the listed tools is called.",
  levels: ["conversation", "message", "step"],
  appliesTo: ["tool_call"],
  params,
  run(p, ctx) {
    const forbidden = new Set(p.tools);
    const hits = scopeToolCalls(ctx).filter((c) => forbidden.has(c.name));
    if (hits.length === 0) return { pass: true, reasoning: `No forbidden tool (${list(p.tools)}) was called.` };
    return { pass: false, reasoning: `Forbidden tool called: ${hits.map((h) => `'${h.name}' at ${h.where}`).join(", ")}.` };
  },
};
