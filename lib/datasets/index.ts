/** Datasets and conversations as the API shows them: row → wire mapping and the not-found rules. */
import "server-only";
import * as repo from "@/db/repositories/datasets";
import { notFound } from "@/lib/api/errors";
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

function toConversationSummary(row: repo.ConversationWithCounts): ConversationSummary {
  return {
    id: row.id,
    dataset_id: row.datasetId,
    position: row.position,
    name: row.name,
    description: row.description,
    meta: row.meta ?? null,
    message_count: row.messageCount,
    step_count: row.stepCount,
    created_at: row.createdAt,
  };
}

export function createDataset(input: { name: string; description?: string | null; userId: string }): Dataset {
  return toDataset(repo.createDataset(input));
}

export function listDatasets(opts: { limit: number; offset: number; userId?: string }) {
  const { items, total } = repo.listDatasets(opts);
  return { items: items.map(toDataset), total };
}

/** The dataset, or a 404 AppError. */
export function getDataset(id: number): Dataset {
  const row = repo.getDataset({ id });
  if (!row) throw notFound("Dataset", id);
  return toDataset(row);
}

/** Throws a 404 AppError unless the dataset exists. */
export function assertDatasetExists(id: number): void {
  if (!repo.datasetExists({ id })) throw notFound("Dataset", id);
}

export function updateDataset(id: number, patch: { name?: string; description?: string | null }): Dataset {
  const row = repo.updateDataset(id, patch);
  if (!row) throw notFound("Dataset", id);
  return toDataset(row);
}

export function deleteDataset(id: number): void {
  if (!repo.deleteDataset({ id })) throw notFound("Dataset", id);
}

export function listConversations(datasetId: number, opts: { limit: number; offset: number }) {
  assertDatasetExists(datasetId);
  const { items, total } = repo.listConversations({ datasetId, ...opts });
  return { items: items.map(toConversationSummary), total };
}

export function getConversation(id: number): Conversation {
  const tree = repo.getConversationTree({ id });
  if (!tree) throw notFound("Conversation", id);
  return {
    ...toConversationSummary(tree.conversation),
    agents: tree.conversation.agents ?? null,
    goal: tree.conversation.goal,
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
