import { z } from "zod";

export const goalBody = z.object({
  refresh: z.boolean().optional().default(true).describe("Extract again even when a goal is stored"),
  model_name: z.string().trim().min(1).max(200).nullable().optional().describe("Judge model; default JUDGE_MODEL"),
});

export const goalSchema = z
  .object({
    conversation_id: z.number().int(),
    goal: z.string().nullable(),
    generated_by: z.string().describe("The model that extracted it, or `first_user_message` when none did"),
  })
  .meta({ id: "ConversationGoal" });
