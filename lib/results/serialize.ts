/** Execution and result rows as the API shows them. */
import type { EvaluationResultRow, PipelineExecutionRow } from "@/db/schema";
import type { Execution, ExecutionError, ExecutionMeta, IndividualResult } from "@/lib/schemas/executions";

const emptyMeta: ExecutionMeta = {
  model: null,
  execution_mode: "sync",
  batch_size: 1,
  template_variables: [],
  user_id: "default",
  scope: "all",
  entity_type: null,
  entity_id: null,
  retry: false,
  input_tokens: 0,
  output_tokens: 0,
  cached_evaluations: 0,
  cost_usd: null,
};

/** The API's meta: the stored one without `queue` (a queued run's request and wave bookkeeping, lib/runner/cluster-run.ts). */
function publicMeta(stored: unknown): ExecutionMeta {
  const { queue: _queue, ...meta } = (stored ?? {}) as Partial<ExecutionMeta> & { queue?: unknown };
  return { ...emptyMeta, ...meta };
}

export function toExecution(row: PipelineExecutionRow): Execution {
  return {
    id: row.id,
    evaluation_pipeline_id: row.evaluationPipelineId,
    dataset_id: row.datasetId,
    pipeline_node_id: row.pipelineNodeId,
    status: row.status,
    started_at: row.startedAt,
    completed_at: row.completedAt,
    duration_ms: row.durationMs,
    total_evaluations: row.totalEvaluations,
    successful_evaluations: row.successfulEvaluations,
    failed_evaluations: row.failedEvaluations,
    skipped_evaluations: row.skippedEvaluations,
    errors: (row.errors as ExecutionError[] | null) ?? [],
    meta: publicMeta(row.meta),
    created_at: row.createdAt,
  };
}

export function toResult(row: EvaluationResultRow): IndividualResult {
  return {
    id: row.id,
    execution_id: row.executionId,
    pipeline_node_id: row.pipelineNodeId,
    entity_type: row.entityType,
    entity_id: row.entityId,
    conversation_id: row.conversationId,
    message_id: row.messageId,
    step_id: row.stepId,
    result: row.result ?? null,
    status: row.status,
    error: row.error,
    raw_output: row.rawOutput,
    cached: row.cached,
    execution_time: row.executionTime,
    model_name: row.modelName,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    created_at: row.createdAt,
  };
}
