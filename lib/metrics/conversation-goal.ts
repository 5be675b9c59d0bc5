/** @GOAL for one conversation: what a run needs before building prompts, and the refresh endpoint. */
import "server-only";
import { getStoredGoal } from "@/db/repositories/judge";
import { contextTokensFor, ensureGoal, resolveModelName, type CallGate, type Goal, type GoalUsage, type JudgeDeps } from "@/lib/judge";
import type { ConversationTree } from "@/lib/conversation-tree";
import { CHARS_PER_TOKEN, fitDoc, promptBudgetTokens } from "./evidence";
import { loadConversationTree } from "./metrics";
import { transcriptDoc } from "./transcript";

/** Characters kept for the goal call's own system message and question around the transcript. */
const GOAL_INSTRUCTION_CHARS = 1_000;

/**
 * The judge input for a conversation's goal: its transcript, cut like any judge prompt to the goal
 * model's context (the whole transcript is sent uncut when it fits), and the first user message.
 */
function goalInput(tree: ConversationTree, model: string | null | undefined) {
  const doc = transcriptDoc(tree.messages, tree.messages.length - 1);
  const budgetChars = promptBudgetTokens(contextTokensFor(resolveModelName(model))) * CHARS_PER_TOKEN;
  return {
    conversationId: tree.conversation.id,
    transcript: doc ? fitDoc(doc, budgetChars, GOAL_INSTRUCTION_CHARS).text : "",
    firstUserMessage: tree.messages.find((m) => m.role === "user")?.content ?? null,
  };
}

/** Make sure the tree carries its stored goal, extracting it once when missing. */
export async function withGoal(
  tree: ConversationTree,
  opts: { model?: string | null; signal?: AbortSignal; gate?: CallGate; onUsage?: (usage: GoalUsage) => void },
  deps?: JudgeDeps,
): Promise<ConversationTree> {
  if (tree.conversation.goal) return tree;
  const goal = await ensureGoal({ ...goalInput(tree, opts.model), model: opts.model, signal: opts.signal, gate: opts.gate, onUsage: opts.onUsage }, deps);
  if (goal.generated_by !== "first_user_message") tree.conversation.goal = goal.goal;
  return tree;
}

/**
 * A conversation's goal (404 if unknown). Without `extract`: what is stored, else the first user
 * message, never a model call. With `extract`: the stored goal, or one extracted now; `refresh`
 * extracts again even when one is stored.
 */
export async function conversationGoal(
  conversationId: number,
  opts: { extract: boolean; refresh?: boolean; model?: string | null },
): Promise<Goal & { conversation_id: number }> {
  const tree = await loadConversationTree(conversationId);
  const input = goalInput(tree, opts.model);
  if (!opts.extract) {
    const stored = await getStoredGoal(conversationId);
    return stored?.goal
      ? { conversation_id: conversationId, goal: stored.goal, generated_by: stored.generatedBy ?? "unknown" }
      : { conversation_id: conversationId, goal: input.firstUserMessage, generated_by: "first_user_message" };
  }
  const goal = await ensureGoal({ ...input, model: opts.model, refresh: opts.refresh });
  return { conversation_id: conversationId, ...goal };
}
