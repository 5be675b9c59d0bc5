/** The number of agent steps in the conversation (or message) stays within bounds. */
import { boundsText, bounds, outOfBounds } from "./counts";
import { scopeSteps } from "./scope";
import type { CheckDefinition } from "./types";

type Params = { min?: number; max?: number };

export const stepCount: CheckDefinition<Params> = {
  type: "step_count",
  label: "Step count",
  description: "The number of agent steps stays within min and max.",
  levels: ["conversation", "message"],
  params: bounds,
  run(p, ctx) {
    const n = scopeSteps(ctx).length;
    const wrong = outOfBounds(n, p);
    const text = `${n} step${n === 1 ? "" : "s"}`;
    return wrong ? { pass: false, reasoning: `${text}: ${wrong}.` } : { pass: true, reasoning: `${text}, ${boundsText(p)} allowed.` };
  },
};
