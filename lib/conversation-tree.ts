/**
 * A loaded conversation as the judge's prompts (lib/metrics) and the checks (lib/checks) read it: the
 * shape of lib/conversation.ts, each message and step placed (its row id and position). It sits below
 * both so neither imports the other for its shape.
 */
import type { Message, Placed, Step } from "@/lib/conversation";

export type JudgeStep = Placed & Step;

export type JudgeMessage = Placed & Pick<Message, "role" | "content"> & { steps: JudgeStep[] };

/**
 * One conversation with its messages and steps in position order — the shape
 * `getConversationTree` in db/repositories/datasets.ts returns, so a loaded tree is passed as is.
 */
export type ConversationTree = {
  conversation: { id: number; goal: string | null; agents: unknown };
  messages: JudgeMessage[];
};
