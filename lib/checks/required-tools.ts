/** The tools a task requires were called: all of them, or at least one of them. */
import { z } from "zod";
import { list, scopeToolCalls } from "./scope";
import type { CheckDefinition } from "./types";

/**
 * Most tools a check may list: a tool_sequence is matched against every call of a conversation, and a
 * list of 20,000 names against 40,000 calls held the loop 2.2 s (issue 48.12). No agent has this many tools.
 */
export const MAX_CHECK_TOOLS = 200;

const toolNames = z
  .array(z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters"))
  .min(1, "name at least one tool")
  .max(MAX_CHECK_TOOLS, `name at most ${MAX_CHECK_TOOLS} tools`);

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
