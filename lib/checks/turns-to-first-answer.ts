/**
 * How many assistant turns the agent takes before it first answers the user in text: assistant
 * messages that only call tools (no content) count as turns that did not answer yet.
 */
import { z } from "zod";
import type { CheckDefinition } from "./types";

const params = z.strictObject({ max: z.number().int().min(1) });

export const turnsToFirstAnswer: CheckDefinition<z.infer<typeof params>> = {
  type: "turns_to_first_answer",
  label: "Turns to first answer",
  description: "The first assistant message with text comes within max assistant turns after the first user message.",
  levels: ["conversation"],
  params,
  run(p, ctx) {
    const messages = ctx.tree.messages;
    const start = messages.findIndex((m) => m.role === "user");
    let turns = 0;
    for (let i = start + 1; i < messages.length; i++) {
      const m = messages[i];
      if (m.role !== "assistant") continue;
      turns++;
      if (m.content != null && m.content.trim() !== "") {
        const text = `First answer at assistant turn ${turns} (message ${i + 1})`;
        return turns <= p.max ? { pass: true, reasoning: `${text}, within ${p.max}.` } : { pass: false, reasoning: `${text}: more than the maximum of ${p.max}.` };
      }
    }
    if (start < 0) return { pass: false, reasoning: "The conversation has no user message to answer." };
    return { pass: false, reasoning: `No assistant message answers in text (${turns} assistant turn${turns === 1 ? "" : "s"} without content).` };
  },
};
