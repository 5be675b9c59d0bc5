/** The listed tools were called in this order (other calls in between allowed unless contiguous). */
import { z } from "zod";
import { toolNames } from "./required-tools";
import { list, scopeToolCalls } from "./scope";
import type { CheckDefinition } from "./types";

const params = z.strictObject({
  tools: toolNames,
  contiguous: z.boolean().optional().default(false).describe("The tools must follow one another with no other call between"),
});

/**
 * Whether `sequence` occurs in `called` as a run of consecutive calls: Knuth–Morris–Pratt, linear in both
 * (the window-by-window comparison was calls × tools: 40,000 calls of a repeated prefix took seconds).
 */
export function occursContiguously(sequence: readonly string[], called: readonly string[]): boolean {
  const m = sequence.length;
  if (m === 0) return true;
  // failure[i]: the length of the longest proper prefix of sequence[0..i] that is also its suffix.
  const failure = new Array<number>(m).fill(0);
  for (let i = 1, k = 0; i < m; i++) {
    while (k > 0 && sequence[i] !== sequence[k]) k = failure[k - 1];
    if (sequence[i] === sequence[k]) k++;
    failure[i] = k;
  }
  for (let i = 0, k = 0; i < called.length; i++) {
    while (k > 0 && called[i] !== sequence[k]) k = failure[k - 1];
    if (called[i] === sequence[k]) k++;
    if (k === m) return true;
  }
  return false;
}

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
      if (occursContiguously(p.tools, called)) return { pass: true, reasoning: `Called ${expected} one after another (${calledText}).` };
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
