/** What a dataset's Live page shows: live conversations arriving, scores over time, rules and the last failures. */
import "server-only";
import { recentLiveConversations, recentRuleFailures, scoreBuckets } from "@/db/repositories/online";
import { assertDatasetExists } from "@/lib/datasets";
import type { LiveDataset } from "@/lib/schemas/online";
import { listRules } from "./rules";

export async function liveDataset(datasetId: number, opts: { bucket: "hour" | "day"; days: number; now?: Date }): Promise<LiveDataset> {
  await assertDatasetExists(datasetId);
  const now = opts.now ?? new Date();
  const since = new Date(now.getTime() - opts.days * 86_400_000).toISOString();
  const [conversations, scores, failures, rules] = await Promise.all([
    recentLiveConversations(datasetId, 50),
    scoreBuckets(datasetId, opts.bucket, since),
    recentRuleFailures(datasetId, 20),
    listRules(datasetId),
  ]);
  return {
    conversations: conversations.map((c) => ({
      id: c.id,
      conversation_id: c.conversationId,
      key: c.key,
      name: c.name,
      messages: c.messages,
      span_count: c.spanCount,
      revision: c.revision,
      first_span_at: c.firstSpanAt,
      last_span_at: c.lastSpanAt,
      evaluated_revision: c.evaluatedRevision,
    })),
    scores: scores.map((s) => ({ bucket: s.bucket, pipeline_node_id: s.nodeId, mean: s.mean, count: s.count })),
    failures: failures.map((f) => ({
      result_id: f.resultId,
      execution_id: f.executionId,
      pipeline_node_id: f.nodeId,
      conversation_id: f.conversationId,
      entity_type: f.entityType,
      entity_id: f.entityId,
      error: f.error,
      created_at: f.createdAt,
    })),
    rules,
  };
}
