/** The number of messages of the conversation (optionally of one role) stays within bounds. */
import { z } from "zod";
import { boundsText, outOfBounds } from "./counts";
import type { CheckDefinition } from "./types";

const params = z
  .strictObject({
    min: z.number().int().min(0).optional(),
    max: z.number().int().min(0).optional(),
    role: z.enum(["any", "user", "assistant", "system", "tool"]).optional().default("any"),
  })
  .refine((b) => b.min !== undefined || b.max !== undefined, { message: "give min, max or both" })
  .refine((b) => b.min === undefined || b.max === undefined || b.min <= b.max, { path: ["min"], message: "must not exceed max" });

export const messageCount: CheckDefinition<z.infer<typeof params>> = {
  type: "message_count",
  label: "Message count",
  description: "The conversation's number of messages (of any role, or one role) stays within min and max.",
  levels: ["conversation"],
  params,
  run(p, ctx) {
    const n = ctx.tree.messages.filter((m) => p.role === "any" || m.role === p.role).length;
    const wrong = outOfBounds(n, p);
    const text = `${n} ${p.role === "any" ? "" : `${p.role} `}message${n === 1 ? "" : "s"}`;
    return wrong ? { pass: false, reasoning: `${text}: ${wrong}.` } : { pass: true, reasoning: `${text}, ${boundsText(p)} allowed.` };
  },
};
