/** No tool result in the cell reports an error: a field at a path is set, or the result matches a pattern. */
import { z } from "zod";
import { compileUserPattern, patternProblem } from "@/lib/user-regex";
import { readPath, renderResult, scopeSteps, show, whereOf } from "./scope";
import type { CheckDefinition } from "./types";

const params = z
  .strictObject({
    path: z.string().trim().max(200).optional().default("error").describe("Dot path in the tool result whose value, when set, is the error; empty for the whole result"),
    pattern: z.string().max(500).optional().describe("Regular expression (case-insensitive, RE2 syntax: no backreferences or lookaround) the value at the path must match to count as an error"),
  })
  .superRefine((p, ctx) => {
    const problem = p.pattern === undefined ? null : patternProblem(p.pattern, "i");
    if (problem) ctx.addIssue({ code: "custom", path: ["pattern"], message: problem });
  });

function isSet(value: unknown): boolean {
  return !(value === undefined || value === null || value === false || value === "" || value === 0);
}

export const toolError: CheckDefinition<z.infer<typeof params>> = {
  type: "tool_error",
  label: "Tool result error",
  description: "Fails when a tool result reports an error: the field at the path is set (default `error`), or with a pattern, the value matches it.",
  levels: ["conversation", "message", "step"],
  appliesTo: ["tool_result"],
  params,
  offLoop: true,
  run(p, ctx) {
    const regex = p.pattern !== undefined ? compileUserPattern(p.pattern, "i") : null;
    const parts = p.path ? p.path.split(".") : [];
    const errors: string[] = [];
    let results = 0;
    for (const s of scopeSteps(ctx)) {
      if (s.step.toolResult === null || s.step.toolResult === undefined) continue;
      results++;
      const { found, value } = readPath(s.step.toolResult, parts);
      if (!found) continue;
      const reported = regex ? regex.test(renderResult(value)) : isSet(value);
      if (reported) errors.push(`${ctx.level === "step" ? "the tool result" : `tool result at ${whereOf(s)}`} reports ${p.path ? `${p.path} = ` : ""}${show(value)}`);
    }
    if (errors.length) return { pass: false, reasoning: `${errors.join("; ")}.` };
    if (results === 0) return { pass: true, reasoning: "No tool result to check." };
    return { pass: true, reasoning: `${results === 1 ? "The tool result reports" : `None of ${results} tool results reports`} no error${p.path ? ` at '${p.path}'` : ""}${regex ? ` matching /${p.pattern}/i` : ""}.` };
  },
};
