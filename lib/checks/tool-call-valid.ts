/** Each tool call in the cell names a declared tool, with its required parameters, no unknown ones, and the declared types. */
import { z } from "zod";
import { declaredTools, jsonType, typeMatches } from "./declared-tools";
import { isRecord, list, scopeToolCalls } from "./scope";
import type { CheckDefinition } from "./types";

const params = z.strictObject({
  allow_unknown_params: z.boolean().optional().default(false).describe("Accept arguments the tool does not declare"),
});

export const toolCallValid: CheckDefinition<z.infer<typeof params>> = {
  type: "tool_call_valid",
  label: "Tool call valid",
  description: "Every tool call names a tool the conversation's agents declare, passes its required parameters, no unknown ones, with the declared types.",
  levels: ["conversation", "message", "step"],
  appliesTo: ["tool_call"],
  params,
  run(p, ctx) {
    const calls = scopeToolCalls(ctx);
    if (calls.length === 0) return { pass: true, reasoning: "No tool call to check." };
    const tools = declaredTools(ctx.tree.conversation.agents);
    const problems: string[] = [];
    for (const call of calls) {
      const tool = tools.get(call.name);
      const at = calls.length > 1 || ctx.level !== "step" ? `${call.where}: ` : "";
      if (!tool) {
        problems.push(`${at}tool '${call.name}' is not declared by the conversation's agents (declared: ${list([...tools.keys()])})`);
        continue;
      }
      if (!tool.params) continue;
      const args = call.arguments === undefined || call.arguments === null ? {} : call.arguments;
      if (!isRecord(args)) {
        problems.push(`${at}'${call.name}' arguments are ${jsonType(args)}, not an object`);
        continue;
      }
      for (const [name, decl] of tool.params) {
        if (decl.required && !Object.hasOwn(args, name)) problems.push(`${at}'${call.name}' is missing required parameter '${name}'`);
      }
      for (const [name, value] of Object.entries(args)) {
        const decl = tool.params.get(name);
        if (!decl) {
          if (!p.allow_unknown_params) problems.push(`${at}'${call.name}' has unknown parameter '${name}'`);
          continue;
        }
        if (decl.types.length && !decl.types.some((t) => typeMatches(value, t))) {
          problems.push(`${at}'${call.name}' parameter '${name}' is ${jsonType(value)}, declared ${decl.types.join(" | ")}`);
        }
      }
    }
    if (problems.length) return { pass: false, reasoning: `${problems.join("; ")}.` };
    const names = [...new Set(calls.map((c) => c.name))];
    return { pass: true, reasoning: `${calls.length === 1 ? "The tool call" : `All ${calls.length} tool calls`} (${list(names)}) match the declared tools.` };
  },
};
