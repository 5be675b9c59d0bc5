/** Test-only helpers for metrics, executions and results on top of the conversation fixture. */
import { insertExecution } from "@/db/repositories/executions";
import { insertResult, insertResults, type NewResult } from "@/db/repositories/evaluation-results";
import { createNode } from "@/db/repositories/metrics";
import type { PipelineNodeRow } from "@/db/schema";
import type { EvaluationLevel, OutputType } from "@/lib/vocabulary";
import { createDataset } from "@/lib/datasets";

export async function createTestDataset(name = "results fixture") {
  return await createDataset({ name, userId: "default" });
}

export async function createTestMetric(datasetId: number, level: EvaluationLevel, outputType: OutputType, name?: string): Promise<PipelineNodeRow> {
  return await createNode(datasetId, {
    name: name ?? `${level} ${outputType}`,
    evaluationLevel: level,
    prompt: "Judge this.",
    outputType,
  });
}

export async function createTestExecution(node: PipelineNodeRow) {
  return await insertExecution({
    evaluationPipelineId: node.evaluationPipelineId,
    datasetId: node.datasetId,
    pipelineNodeId: null,
    totalEvaluations: 0,
    meta: {},
  });
}

export type ResultInput = {
  executionId: number;
  node: PipelineNodeRow;
  entity: { type: EvaluationLevel; id: number; conversationId: number; messageId?: number | null; stepId?: number | null };
  result?: unknown;
  score?: number | null;
  status?: "completed" | "failed";
  error?: string | null;
  extra?: Partial<NewResult>;
};

/** Save one result the way the runner does (counted on its execution). */
export async function addTestResult(input: ResultInput) {
  return await insertResult(resultValues(input));
}

/**
 * Save many results of one execution the way an in-process run saves a group of cells (multi-row
 * inserts in one transaction, counted on the execution): thousands take a second instead of a
 * transaction each, which under load outlasted a test's time limit.
 */
export async function addTestResults(inputs: ResultInput[]) {
  if (inputs.length === 0) return [];
  return await insertResults(inputs[0].executionId, inputs.map(resultValues));
}

function resultValues(input: ResultInput): NewResult {
  const status = input.status ?? "completed";
  return {
    executionId: input.executionId,
    pipelineNodeId: input.node.id,
    datasetId: input.node.datasetId,
    entityType: input.entity.type,
    entityId: input.entity.id,
    conversationId: input.entity.conversationId,
    messageId: input.entity.messageId ?? null,
    stepId: input.entity.stepId ?? null,
    result: input.result ?? null,
    score: input.score ?? null,
    status,
    error: input.error ?? null,
    modelName: "judge-double",
    inputTokens: 10,
    outputTokens: 5,
    executionTime: 42,
    ...input.extra,
  };
}
