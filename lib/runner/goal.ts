/** @GOAL for one conversation: what a run needs before building prompts, and the refresh endpoint. */
import "server-only";
import { getStoredGoal } from "@/db/repositories/judge";
import { ensureGoal, type Goal, type JudgeDeps } from "@/lib/judge";
import { loadConversationTree, type ConversationTree } from "@/lib/metrics";
import { transcript } from "@/lib/metrics/transcript";

/** The judge input for a conversation's goal: its transcript and first user message. */
function goalInput(tree: ConversationTree) {
  return {
    conversationId: tree.conversation.id,
    transcript: transcript(tree.messages, tree.messages.length - 1) ?? "",
    firstUserMessage: tree.messages.find((m) => m.role === "user")?.content ?? null,
  };
}

/** Make sure the tree carries its stored goal, extracting it once when missing. */
export async function withGoal(
  tree: ConversationTree,
  opts: { model?: string | null; signal?: AbortSignal },
  deps?: JudgeDeps,
): Promise<ConversationTree> {
  if (tree.conversation.goal) return tree;
  const goal = await ensureGoal({ ...goalInput(tree), model: opts.model, signal: opts.signal }, deps);
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
  const tree = loadConversationTree(conversationId);
  const input = goalInput(tree);
  if (!opts.extract) {
    const stored = getStoredGoal(conversationId);
    return stored?.goal
      ? { conversation_id: conversationId, goal: stored.goal, generated_by: stored.generatedBy ?? "unknown" }
      : { conversation_id: conversationId, goal: input.firstUserMessage, generated_by: "first_user_message" };
  }
  const goal = await ensureGoal({ ...input, model: opts.model, refresh: opts.refresh });
  return { conversation_id: conversationId, ...goal };
}
