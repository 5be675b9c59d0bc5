/** Datasets and conversations as the API shows them: row → wire mapping and the not-found rules. */
import "server-only";
import * as repo from "@/db/repositories/datasets";
import { conversationLabel } from "@/lib/conversation-label";
import { AppError, notFound } from "@/lib/errors";
import { decodeCursor, encodeCursor } from "./cursor";
import type { Conversation, ConversationSummary, Dataset } from "@/lib/schemas/datasets";

function toDataset(row: repo.DatasetWithCounts): Dataset {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    user_id: row.userId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    conversation_count: row.conversationCount,
    message_count: row.messageCount,
    step_count: row.stepCount,
  };
}

function toConversationSummary(row: repo.ConversationWithCounts, firstUser: string | null): ConversationSummary {
  return {
    id: row.id,
    dataset_id: row.datasetId,
    position: row.position,
    name: row.name,
    label: conversationLabel({ name: row.name, position: row.position, meta: row.meta, firstUser }),
    description: row.description,
    meta: row.meta ?? null,
    message_count: row.messageCount,
    step_count: row.stepCount,
    created_at: row.createdAt,
  };
}

export async function createDataset(input: { name: string; description?: string | null; userId: string }): Promise<Dataset> {
  return toDataset(await repo.createDataset(input));
}

/** A page of datasets, newest first; `name`: only those whose name contains it (any case). */
export async function listDatasets(opts: { limit: number; offset: number; userId?: string; name?: string }) {
  const { items, total } = await repo.listDatasets(opts);
  return { items: items.map(toDataset), total };
}

/** The dataset, or a 404 AppError. */
export async function getDataset(id: number): Promise<Dataset> {
  const row = await repo.getDataset({ id });
  if (!row) throw notFound("Dataset", id);
  return toDataset(row);
}

/** Throws a 404 AppError unless the dataset exists. */
export async function assertDatasetExists(id: number): Promise<void> {
  if (!await repo.datasetExists({ id })) throw notFound("Dataset", id);
}

export async function updateDataset(id: number, patch: { name?: string; description?: string | null }): Promise<Dataset> {
  const row = await repo.updateDataset(id, patch);
  if (!row) throw notFound("Dataset", id);
  return toDataset(row);
}

export async function deleteDataset(id: number): Promise<void> {
  if (!await repo.deleteDataset({ id })) throw notFound("Dataset", id);
}

/**
 * A page of a dataset's conversations in position order; `name`: only those whose name contains it (any
 * case); `cursor`: the page after the one that gave it (keyset paging). 404 for an unknown dataset, 422 for
 * a cursor sent with an offset or not ours. `nextCursor` when the page is full.
 */
export async function listConversations(datasetId: number, opts: { limit: number; offset: number; ids?: number[]; name?: string; cursor?: string }) {
  await assertDatasetExists(datasetId);
  const { cursor, ...rest } = opts;
  if (cursor !== undefined && opts.offset) throw new AppError("unprocessable", "Invalid query parameter cursor: replaces offset: send one or the other", [{ path: "cursor", message: "replaces offset: send one or the other" }]);
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const { items, total } = await repo.listConversations({ datasetId, ...rest, after });
  const last = items[items.length - 1];
  return { items: items.map((row) => toConversationSummary(row, row.firstUser)), total, nextCursor: last && items.length === opts.limit ? encodeCursor(last.position) : null };
}

export async function getConversation(id: number): Promise<Conversation> {
  const tree = await repo.getConversationTree({ id });
  if (!tree) throw notFound("Conversation", id);
  return toConversation(tree);
}

/** Several conversations with their messages and steps, in the order of `ids` (ids not found are left out). */
export async function getConversations(ids: number[]): Promise<Conversation[]> {
  const trees = await repo.getConversationTrees(ids);
  return ids.flatMap((id) => {
    const tree = trees.get(id);
    return tree ? [toConversation(tree)] : [];
  });
}

function toConversation(tree: repo.StoredConversationTree): Conversation {
  return {
    ...toConversationSummary(tree.conversation, tree.messages.find((m) => m.role === "user")?.content ?? null),
    agents: tree.conversation.agents ?? null,
    goal: tree.conversation.goal,
    goal_generated_by: tree.conversation.goal ? (tree.conversation.goalGeneratedBy ?? null) : null,
    messages: tree.messages.map((m) => ({
      id: m.id,
      position: m.position,
      role: m.role,
      content: m.content,
      meta: m.meta ?? null,
      steps: m.steps.map((s) => ({
        id: s.id,
        position: s.position,
        thinking: s.thinking,
        tool_call: s.toolCall ?? null,
        tool_result: s.toolResult ?? null,
        output_content: s.outputContent,
        output_structured: s.outputStructured ?? null,
        model_name: s.modelName,
        agent_name: s.agentName,
      })),
    })),
  };
}
