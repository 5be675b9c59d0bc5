/**
 * Which cells a run evaluates: the scope (cell, row, column, all) resolved against the dataset's
 * metrics and entities, in grid order, optionally only the cells whose latest result failed or is missing.
 */
import "server-only";
import { latestStatusByCell } from "@/db/repositories/evaluation-results";
import { listEntities, locateEntityInDataset } from "@/db/repositories/entities";
import { getNode, listNodes } from "@/db/repositories/metrics";
import type { PipelineNodeRow } from "@/db/schema";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { AppError, notFound } from "@/lib/errors";
import { assertDatasetExists } from "@/lib/datasets";
import { metricAppliesToStep, stepKindsOf } from "@/lib/metrics/step-kinds";
import type { RunRequest } from "@/lib/schemas/executions";

export type Scope = "cell" | "row" | "rows" | "column" | "all";

export type Cell = {
  node: PipelineNodeRow;
  entityType: EvaluationLevel;
  entityId: number;
  conversationId: number;
  messageId: number | null;
  stepId: number | null;
};

/** `allNodes`: every metric of the dataset, by id — dependencies outside the run are read from their latest results. */
export type Plan = { scope: Scope; nodes: PipelineNodeRow[]; cells: Cell[]; pipelineId: number | null; allNodes: Map<number, PipelineNodeRow> };

const label: Record<EvaluationLevel, string> = { conversation: "Conversation", message: "Message", step: "Step" };

function scopeOf(req: RunRequest): Scope {
  const node = req.pipeline_node_id != null;
  const entity = req.entity_id != null;
  if (node && entity) return "cell";
  if (entity) return "row";
  if (req.conversation_ids) return "rows";
  if (node) return "column";
  return req.entity_type != null ? "rows" : "all";
}

/** Every cell of the dataset (or one conversation) for the given metrics, in grid order. */
async function gridCells(datasetId: number, nodes: PipelineNodeRow[], conversationId?: number | number[]): Promise<Cell[]> {
  const byLevel = (level: EvaluationLevel) => nodes.filter((n) => n.evaluationLevel === level);
  const convNodes = byLevel("conversation");
  const msgNodes = byLevel("message");
  const stepNodes = byLevel("step");
  const { conversations, messages, steps } = await listEntities(datasetId, conversationId);
  const messagesByConv = groupBy(messages, (m) => m.conversationId);
  const stepsByMessage = groupBy(steps, (s) => s.messageId);
  const cells: Cell[] = [];
  for (const c of conversations) {
    for (const node of convNodes) {
      cells.push({ node, entityType: "conversation", entityId: c.id, conversationId: c.id, messageId: null, stepId: null });
    }
    for (const m of messagesByConv.get(c.id) ?? []) {
      if (m.role === "assistant") {
        for (const node of msgNodes) {
          cells.push({ node, entityType: "message", entityId: m.id, conversationId: c.id, messageId: m.id, stepId: null });
        }
      }
      for (const s of stepsByMessage.get(m.id) ?? []) {
        const kinds = stepKindsOf(s);
        for (const node of stepNodes) {
          // A step of a kind the metric does not judge is no cell of the run: no result, no judge call, n/a.
          if (!metricAppliesToStep(node.appliesTo, kinds)) continue;
          cells.push({ node, entityType: "step", entityId: s.id, conversationId: c.id, messageId: m.id, stepId: s.id });
        }
      }
    }
  }
  return cells;
}

function groupBy<T>(items: T[], key: (t: T) => number): Map<number, T[]> {
  const map = new Map<number, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}

/**
 * Resolve a run request into cells; 404/422 AppErrors for anything that does not fit the dataset.
 * `resultsUpTo`: a `retry` plan made again later (a queued run's next dependency wave) judges by the
 * results that existed when it was first made, not by the ones the run has written since.
 */
export async function planRun(req: RunRequest, opts: { resultsUpTo?: number } = {}): Promise<Plan> {
  await assertDatasetExists(req.dataset_id);
  const scope = scopeOf(req);
  const allNodes = await listNodes({ datasetId: req.dataset_id });
  let nodes = allNodes;
  if (req.pipeline_node_id != null) {
    const node = await getNode({ id: req.pipeline_node_id });
    if (!node) throw notFound("Metric", req.pipeline_node_id);
    if (node.datasetId !== req.dataset_id) {
      throw new AppError("unprocessable", `Metric ${node.id} belongs to dataset ${node.datasetId}, not ${req.dataset_id}`, [
        { path: "pipeline_node_id", message: "must be a metric of this dataset" },
      ]);
    }
    nodes = [node];
  } else if (req.pipeline_node_ids) {
    const byId = new Map(allNodes.map((n) => [n.id, n]));
    const missing = req.pipeline_node_ids.filter((id) => !byId.has(id));
    if (missing.length) {
      throw new AppError("unprocessable", `Metric ${missing.join(", ")} is not a metric of dataset ${req.dataset_id}`, [
        { path: "pipeline_node_ids", message: "must be metrics of this dataset" },
      ]);
    }
    const wanted = new Set(req.pipeline_node_ids);
    nodes = allNodes.filter((n) => wanted.has(n.id));
  }
  // A pairwise metric judges two replies at once: comparisons (POST /api/comparisons) run it, never a run.
  const pairwise = nodes.filter((n) => n.outputType === "pairwise");
  if (pairwise.length && (req.pipeline_node_id != null || req.pipeline_node_ids)) {
    throw new AppError("unprocessable", `Metric ${pairwise.map((n) => n.id).join(", ")} is pairwise: it compares two replies, so it runs in a comparison (POST /api/comparisons), not a run`, [
      { path: req.pipeline_node_id != null ? "pipeline_node_id" : "pipeline_node_ids", message: "must not be a pairwise metric" },
    ]);
  }
  nodes = nodes.filter((n) => n.outputType !== "pairwise");
  if (allNodes.length === 0) {
    throw new AppError("unprocessable", `Dataset ${req.dataset_id} has no metrics: add a metric before running`, [
      { path: "dataset_id", message: "has no metrics" },
    ]);
  }

  let cells: Cell[];
  if (req.entity_id != null && req.entity_type != null) {
    const entityType = req.entity_type;
    const where = await locateEntityInDataset(req.dataset_id, entityType, req.entity_id);
    if (!where) throw new AppError("not_found", `${label[entityType]} ${req.entity_id} does not exist in dataset ${req.dataset_id}`);
    const all = await gridCells(req.dataset_id, nodes, where.conversationId);
    if (entityType === "conversation") cells = all;
    else if (entityType === "message") cells = all.filter((c) => c.messageId === req.entity_id);
    else cells = all.filter((c) => c.stepId === req.entity_id);
    if (scope === "cell") {
      const node = nodes[0];
      if (node.evaluationLevel !== entityType) {
        throw new AppError("unprocessable", `Metric ${node.id} is ${node.evaluationLevel}-level and cannot evaluate a ${entityType}`, [
          { path: "entity_type", message: `must be ${node.evaluationLevel}` },
        ]);
      }
      cells = cells.filter((c) => c.entityType === entityType && c.entityId === req.entity_id);
      if (cells.length === 0 && entityType === "step") {
        throw new AppError("unprocessable", `Metric ${node.id} does not apply to step ${req.entity_id}: it judges ${(node.appliesTo ?? []).join(", ")} steps only`, [
          { path: "entity_id", message: "the step is of a kind the metric does not judge" },
        ]);
      }
      if (cells.length === 0) {
        throw new AppError("unprocessable", "Message-level metrics evaluate assistant messages only", [
          { path: "entity_id", message: `message ${req.entity_id} is a ${where.role} message` },
        ]);
      }
    } else if (cells.length === 0) {
      throw new AppError("unprocessable", `No metric of dataset ${req.dataset_id} applies to ${entityType} ${req.entity_id}`, [
        { path: "entity_id", message: "no metric applies to this entity" },
      ]);
    }
  } else {
    cells = await gridCells(req.dataset_id, nodes, req.conversation_ids);
    // `entity_type` with `entity_id: null`: every entity of that type — the column (the metric must be of
    // that level), or without a metric every row of that type (a message row holds its steps' cells too).
    const entityType = req.entity_type;
    if (entityType != null && scope === "column" && nodes[0].evaluationLevel !== entityType) {
      throw new AppError("unprocessable", `Metric ${nodes[0].id} is ${nodes[0].evaluationLevel}-level; its column has no ${entityType} cells`, [
        { path: "entity_type", message: `must be ${nodes[0].evaluationLevel} (or omitted) for this metric` },
      ]);
    }
    if (entityType === "message") cells = cells.filter((c) => c.messageId !== null);
    else if (entityType === "step") cells = cells.filter((c) => c.stepId !== null);
  }

  if (req.retry) {
    const latest = await latestStatusByCell(req.dataset_id, opts.resultsUpTo);
    cells = cells.filter((c) => latest.get(`${c.node.id}:${c.entityType}:${c.entityId}`) !== "completed");
  }
  return { scope, nodes, cells, pipelineId: allNodes[0]?.evaluationPipelineId ?? null, allNodes: new Map(allNodes.map((n) => [n.id, n])) };
}
