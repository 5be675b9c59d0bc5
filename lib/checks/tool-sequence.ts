/** The listed tools were called in this order (other calls in between allowed unless contiguous). */
import { z } from "zod";
import { toolNames } from "./required-tools";
import { list, scopeToolCalls } from "./scope";
import type { CheckDefinition } from "./types";

const params = z.strictObject({
  tools: toolNames,
  contiguous: z.boolean().optional().default(false).describe("The tools must follow one another with no other call between"),
});

export const toolSequence: CheckDefinition<z.infer<typeof params>> = {
  type: "tool_sequence",
  label: "Tool sequence",
  description: "The listed tools are called in order; with contiguous, one right after another.",
  levels: ["conversation", "message"],
  params,
  run(p, ctx) {
    const called = scopeToolCalls(ctx).map((c) => c.name);
    const calledText = `tools called: ${called.length ? called.join(" → ") : "none"}`;
    const expected = p.tools.join(" → ");
    if (p.contiguous) {
      for (let i = 0; i + p.tools.length <= called.length; i++) {
        if (p.tools.every((t, j) => called[i + j] === t)) return { pass: true, reasoning: `Called ${expected} one after another (${calledText}).` };
      }
      return { pass: false, reasoning: `The sequence ${expected} does not occur without other calls in between; ${calledText}.` };
    }
    let next = 0;
    for (const name of called) if (next < p.tools.length && name === p.tools[next]) next++;
    if (next === p.tools.length) return { pass: true, reasoning: `Called ${expected} in order (${calledText}).` };
    const missing = p.tools[next];
    const after = next > 0 ? ` after '${p.tools[next - 1]}'` : "";
    const ever = called.includes(missing) ? ` (it was called, but not${after || " in order"})` : "";
    return { pass: false, reasoning: `Expected ${list([missing])}${after} as call ${next + 1} of ${expected}, never called there${ever}; ${calledText}.` };
  },
};
