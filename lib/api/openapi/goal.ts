import { idParams } from "@/lib/schemas/common";
import { goalBody, goalSchema } from "@/lib/schemas/goal";
import { badRequest, notFoundResponse } from "./shared";
import type { Operation } from "./types";

export const goalOperations: Operation[] = [
  {
    method: "get",
    path: "/conversations/{id}/goal",
    operationId: "getConversationGoal",
    summary: "The conversation's goal (@GOAL) as stored",
    description: "Never calls the judge: the stored goal, or the first user message (`generated_by: first_user_message`) while none is stored.",
    tag: "Conversations",
    params: idParams,
    responses: { 200: { description: "The goal", schema: goalSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "post",
    path: "/conversations/{id}/goal",
    operationId: "extractConversationGoal",
    summary: "Extract the conversation's goal with the judge model and store it",
    description:
      "One short structured call; every metric using @GOAL then reuses the stored goal. `refresh` (default true) extracts " +
      "again even when a goal is stored. Without a judge model, or when the call fails, the first user message is returned and nothing is stored.",
    tag: "Conversations",
    params: idParams,
    body: goalBody,
    responses: { 200: { description: "The goal", schema: goalSchema }, 400: badRequest, 404: notFoundResponse },
  },
];
