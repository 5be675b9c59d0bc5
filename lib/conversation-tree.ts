/**
 * A loaded conversation as the judge's prompts (lib/metrics) and the checks (lib/checks) read it. It sits
 * below both so neither imports the other for its shape.
 */
import type { MessageRole } from "@/lib/vocabulary";

export type JudgeStep = {
  id: number;
  position: number;
  thinking: string | null;
  toolCall: unknown;
  toolResult: unknown;
  outputContent: string | null;
  outputStructured: unknown;
  modelName: string | null;
  agentName: string | null;
};

export type JudgeMessage = {
  id: number;
  position: number;
  role: MessageRole;
  content: string | null;
  steps: JudgeStep[];
};

/**
 * One conversation with its messages and steps in position order — the shape
 * `getConversationTree` in db/repositories/datasets.ts returns, so a loaded tree is passed as is.
 */
export type ConversationTree = {
  conversation: { id: number; goal: string | null; agents: unknown };
  messages: JudgeMessage[];
};
