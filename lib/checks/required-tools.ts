/** The tools a task requires were called: all of them, or at least one of them. */
import { z } from "zod";
import { list, scopeToolCalls } from "./scope";
import type { CheckDefinition } from "./types";

const toolNames = z.array(z.string().trim().min(1, "must not be empty")).min(1, "name at least one tool");

const params = z.strictObject({
  tools: toolNames,
  mode: z.enum(["all", "any"]).optional().default("all").describe("all: every tool must be called; any: at least one"),
});

export const requiredTools: CheckDefinition<z.infer<typeof params>> = {
  type: "required_tools",
  label: "Required tools",
  description: "The conversation (or message) calls all of the listed tools, or any one of them.",
  levels: ["conversation", "message"],
  params,
  run(p, ctx) {
    const called = new Set(scopeToolCalls(ctx).map((c) => c.name));
    const missing = p.tools.filter((t) => !called.has(t));
    const calledList = list([...called]);
    if (p.mode === "any") {
      return missing.length < p.tools.length
        ? { pass: true, reasoning: `Called ${list(p.tools.filter((t) => called.has(t)))} (one of ${list(p.tools)} is required).` }
        : { pass: false, reasoning: `None of ${list(p.tools)} was called; tools called: ${calledList}.` };
    }
    return missing.length === 0
      ? { pass: true, reasoning: `All required tools were called: ${list(p.tools)}.` }
      : { pass: false, reasoning: `Required tool${missing.length > 1 ? "s" : ""} ${list(missing)} not called; tools called: ${calledList}.` };
  },
};

export { toolNames };
