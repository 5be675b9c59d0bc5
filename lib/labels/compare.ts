/**
 * Two executions of a dataset side by side: per cell both verdicts, flips and score deltas; per metric
 * agreement, the models that answered and the prompt version each run used, so the page can name what
 * changed; per run tokens and cost.
 */
import "server-only";
import { getExecutionRow } from "@/db/repositories/executions";
import { listNodes } from "@/db/repositories/metrics";
import { promptVersionsAt } from "@/db/repositories/prompt-versions";
import { executionCellRows, type CellResultRow } from "@/db/repositories/readings";
import type { MetricPromptVersionRow, PipelineExecutionRow } from "@/db/schema";
import { agreementKind, computeAgreement, type PairedItem } from "@/lib/agreement";
import { AppError, notFound } from "@/lib/errors";
import type { Comparison } from "@/lib/schemas/compare";
import type { ExecutionMeta } from "@/lib/schemas/executions";
import { readingOfResult } from "./readings";

const cellKey = (r: Pick<CellResultRow, "pipelineNodeId" | "entityType" | "entityId">) => `${r.pipelineNodeId}:${r.entityType}:${r.entityId}`;

function valueOf(result: unknown): unknown {
  if (result && typeof result === "object" && !Array.isArray(result) && "value" in result) return (result as { value: unknown }).value ?? null;
  return result ?? null;
}

function summary(row: PipelineExecutionRow, cells: CellResultRow[]): Comparison["a"] {
  const meta = row.meta as Partial<ExecutionMeta>;
  return {
    id: row.id,
    status: row.status,
    created_at: row.createdAt,
    model: meta.model ?? null,
    models: [...new Set(cells.map((c) => c.modelName).filter((m): m is string => m !== null))].sort(),
    results: cells.length,
    completed: cells.filter((c) => c.status === "completed").length,
    failed: cells.filter((c) => c.status === "failed").length,
    input_tokens: meta.input_tokens ?? cells.reduce((s, c) => s + c.inputTokens, 0),
    output_tokens: meta.output_tokens ?? cells.reduce((s, c) => s + c.outputTokens, 0),
    cost_usd: meta.cost_usd ?? null,
  };
}

const toVersion = (v: MetricPromptVersionRow | undefined) =>
  v ? { version: v.version, prompt: v.prompt, model_name: v.modelName, created_at: v.createdAt } : null;

export async function compareExecutions(q: { a: number; b: number; pipeline_node_id?: number }): Promise<Comparison> {
  const ea = await getExecutionRow(q.a);
  if (!ea) throw notFound("Execution", q.a);
  const eb = await getExecutionRow(q.b);
  if (!eb) throw notFound("Execution", q.b);
  if (ea.datasetId !== eb.datasetId) {
    throw new AppError("unprocessable", `Executions ${q.a} and ${q.b} are of different datasets`, [
      { path: "b", message: `must be an execution of dataset ${ea.datasetId}, like a` },
    ]);
  }
  const cellsA = await executionCellRows(ea.id, q.pipeline_node_id);
  const cellsB = await executionCellRows(eb.id, q.pipeline_node_id);
  const nodes = new Map((await listNodes({ datasetId: ea.datasetId })).map((n) => [n.id, n]));
  const byKeyB = new Map(cellsB.map((c) => [cellKey(c), c]));
  const byKeyA = new Map(cellsA.map((c) => [cellKey(c), c]));
  const keys = [...new Set([...byKeyA.keys(), ...byKeyB.keys()])];
  const nodeIds = [...new Set([...cellsA, ...cellsB].map((c) => c.pipelineNodeId))].filter((id) => nodes.has(id));
  const versionsA = await promptVersionsAt(nodeIds, ea.createdAt);
  const versionsB = await promptVersionsAt(nodeIds, eb.createdAt);

  const side = (c: CellResultRow | undefined) =>
    c ? { status: c.status, value: c.status === "completed" ? valueOf(c.result) : null, score: c.score, model_name: c.modelName } : null;
  const cells: Comparison["cells"] = [];
  const paired = new Map<number, PairedItem[]>();
  for (const key of keys) {
    const a = byKeyA.get(key);
    const b = byKeyB.get(key);
    const any = (a ?? b)!;
    const node = nodes.get(any.pipelineNodeId);
    if (!node) continue;
    const ra = a ? readingOfResult(node.outputType, a) : undefined;
    const rb = b ? readingOfResult(node.outputType, b) : undefined;
    const both = ra !== undefined && rb !== undefined;
    if (both) {
      const list = paired.get(node.id) ?? [];
      list.push({ entity_type: any.entityType, entity_id: any.entityId, conversation_id: any.conversationId, a: ra, b: rb });
      paired.set(node.id, list);
    }
    const delta = a?.status === "completed" && b?.status === "completed" && a.score !== null && b.score !== null ? b.score - a.score : null;
    cells.push({
      pipeline_node_id: node.id,
      entity_type: any.entityType,
      entity_id: any.entityId,
      conversation_id: any.conversationId,
      a: side(a),
      b: side(b),
      flip: both && ra !== rb,
      delta,
    });
  }
  cells.sort((x, y) => x.pipeline_node_id - y.pipeline_node_id || x.conversation_id - y.conversation_id || x.entity_id - y.entity_id);

  const metrics: Comparison["metrics"] = nodeIds
    .sort((x, y) => (nodes.get(x)!.position - nodes.get(y)!.position))
    .map((id) => {
      const node = nodes.get(id)!;
      const items = paired.get(id) ?? [];
      const figures = computeAgreement(agreementKind(node.outputType), items);
      const deltas = cells.filter((c) => c.pipeline_node_id === id && c.delta !== null).map((c) => c.delta!);
      const models = (cs: CellResultRow[]) => [...new Set(cs.filter((c) => c.pipelineNodeId === id && c.modelName).map((c) => c.modelName!))].sort();
      const ma = models(cellsA);
      const mb = models(cellsB);
      const va = versionsA.get(id);
      const vb = versionsB.get(id);
      const changed: Array<"model" | "prompt"> = [];
      if (ma.join("\n") !== mb.join("\n")) changed.push("model");
      if (va && vb ? va.prompt !== vb.prompt || va.outputType !== vb.outputType || JSON.stringify(va.outputSchema) !== JSON.stringify(vb.outputSchema) : false) changed.push("prompt");
      return {
        pipeline_node_id: id,
        name: node.name,
        output_type: node.outputType,
        n: items.length,
        flips: items.filter((i) => i.a !== i.b).length,
        mean_delta: deltas.length ? deltas.reduce((s, d) => s + d, 0) / deltas.length : null,
        accuracy: figures.accuracy,
        kappa: figures.kappa,
        spearman: figures.spearman,
        models: { a: ma, b: mb },
        prompt_version: { a: toVersion(va), b: toVersion(vb) },
        changed,
      };
    });
  return { a: summary(ea, cellsA), b: summary(eb, cellsB), metrics, cells };
}
