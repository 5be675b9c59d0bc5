/**
 * Two executions of different datasets paired by source (issue 37): b's dataset holds conversations a
 * generation made from a's (`meta.source_conversation_id`, `meta.repeat`). Metrics are paired by name,
 * conversation-level cells by source conversation; with repeats, pass^k (every repeat passes) and pass@k
 * (some repeat passes) per metric. Target and simulator errors are counted apart, never as passes.
 */
import "server-only";
import { getConversationTrees } from "@/db/repositories/datasets";
import { getExecutionRow } from "@/db/repositories/executions";
import { gateCellRows, type GateCellRow } from "@/db/repositories/gate";
import { listNodes } from "@/db/repositories/metrics";
import type { PipelineExecutionRow } from "@/db/schema";
import type { OutputType } from "@/lib/vocabulary";
import { AppError, notFound } from "@/lib/errors";
import type { SourceComparison } from "@/lib/schemas/compare";
import { readingOfResult } from "./readings";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function sideOf(outputType: OutputType, row: GateCellRow) {
  const value = isObject(row.result) && "value" in row.result ? row.result.value : (row.result ?? null);
  // The reading the agreement pages use: a checkbox's verdict, else the score (passing from 0.5).
  const reading = readingOfResult(outputType, row);
  const pass = reading === undefined ? null : typeof reading === "boolean" ? reading : typeof reading === "number" ? reading >= 0.5 : null;
  return { status: row.status, value, score: row.score, pass };
}

function summary(row: PipelineExecutionRow, cells: GateCellRow[]): SourceComparison["a"] {
  const meta = row.meta as Record<string, unknown>;
  return {
    id: row.id,
    status: row.status,
    created_at: row.createdAt,
    model: (meta.model as string | null) ?? null,
    models: [],
    results: cells.length,
    completed: cells.filter((c) => c.status === "completed").length,
    failed: cells.filter((c) => c.status === "failed").length,
    input_tokens: Number(meta.input_tokens ?? 0),
    output_tokens: Number(meta.output_tokens ?? 0),
    cost_usd: (meta.cost_usd as number | null) ?? null,
  };
}

const rate = (xs: boolean[]) => (xs.length ? xs.filter(Boolean).length / xs.length : null);

export async function compareBySource(q: { a: number; b: number }): Promise<SourceComparison> {
  const ea = await getExecutionRow(q.a);
  if (!ea) throw notFound("Execution", q.a);
  const eb = await getExecutionRow(q.b);
  if (!eb) throw notFound("Execution", q.b);
  const nodesA = new Map((await listNodes({ datasetId: ea.datasetId })).map((n) => [n.id, n]));
  const nodesB = new Map((await listNodes({ datasetId: eb.datasetId })).map((n) => [n.id, n]));
  const rowsA = (await gateCellRows([ea.id])).filter((r) => r.entityType === "conversation");
  const rowsB = (await gateCellRows([eb.id])).filter((r) => r.entityType === "conversation");
  const trees = await getConversationTrees([...new Set(rowsB.map((r) => r.conversationId))]);
  const sourceOf = new Map<number, { source: number; repeat: number; stop: string | null }>();
  for (const [id, t] of trees) {
    const meta = isObject(t.conversation.meta) ? t.conversation.meta : {};
    if (typeof meta.source_conversation_id === "number") sourceOf.set(id, { source: meta.source_conversation_id, repeat: Number(meta.repeat ?? 0), stop: typeof meta.stop_reason === "string" ? meta.stop_reason : null });
  }
  if (rowsB.length && sourceOf.size === 0) {
    throw new AppError("unprocessable", `Execution ${eb.id}'s conversations name no source conversation (meta.source_conversation_id): pair_by=source compares a generation's dataset with its source`, [{ path: "b", message: "must be a run of a generated dataset" }]);
  }
  const names = [...new Set([...rowsA.map((r) => nodesA.get(r.pipelineNodeId)?.name), ...rowsB.map((r) => nodesB.get(r.pipelineNodeId)?.name)])].filter((n): n is string => Boolean(n));
  const cells: SourceComparison["cells"] = [];
  const metrics: SourceComparison["metrics"] = [];
  for (const name of names.sort()) {
    const nodeA = [...nodesA.values()].find((n) => n.name === name);
    const nodeB = [...nodesB.values()].find((n) => n.name === name);
    const outputType = (nodeA ?? nodeB)!.outputType;
    const aBySource = new Map(rowsA.filter((r) => r.pipelineNodeId === nodeA?.id).map((r) => [r.conversationId, sideOf(outputType, r)]));
    const bBySource = new Map<number, SourceComparison["cells"][number]["b"]>();
    for (const r of rowsB.filter((x) => x.pipelineNodeId === nodeB?.id)) {
      const link = sourceOf.get(r.conversationId);
      if (!link) continue;
      const list = bBySource.get(link.source) ?? [];
      list.push({ ...sideOf(outputType, r), conversation_id: r.conversationId, repeat: link.repeat, stop_reason: link.stop });
      bBySource.set(link.source, list);
    }
    let worse = 0;
    let better = 0;
    const deltas: number[] = [];
    const hat: boolean[] = [];
    const at: boolean[] = [];
    let repeats = 0;
    for (const source of [...new Set([...aBySource.keys(), ...bBySource.keys()])].sort((x, y) => x - y)) {
      const a = aBySource.get(source) ?? null;
      const b = (bBySource.get(source) ?? []).sort((x, y) => x.repeat - y.repeat);
      repeats = Math.max(repeats, b.length);
      const judged = b.filter((x) => x.pass !== null);
      const first = judged[0];
      const flip = Boolean(a && a.pass !== null && first && first.pass !== a.pass);
      if (flip && a!.pass) worse++;
      else if (flip) better++;
      const scored = judged.filter((x) => x.score !== null);
      const delta = a?.score != null && scored.length ? scored.reduce((s, x) => s + x.score!, 0) / scored.length - a.score : null;
      if (delta !== null) deltas.push(delta);
      // A repeat cut short by the target counts as not passing; a simulator's error is not the agent's and is left out.
      const counted = b.filter((x) => x.stop_reason !== "simulator_error");
      if (a && counted.length) {
        const passes = counted.map((x) => x.stop_reason !== "target_error" && x.pass === true);
        hat.push(passes.every(Boolean));
        at.push(passes.some(Boolean));
      }
      cells.push({ metric: name, source_conversation_id: source, a, b, flip, delta });
    }
    const allB = [...bBySource.values()].flat();
    metrics.push({
      name,
      output_type: outputType,
      pairs: hat.length,
      repeats,
      a_pass_rate: rate([...aBySource.values()].filter((x) => x.pass !== null).map((x) => x.pass!)),
      b_pass_rate: rate(allB.filter((x) => x.pass !== null).map((x) => x.pass!)),
      worse,
      better,
      mean_delta: deltas.length ? deltas.reduce((s, d) => s + d, 0) / deltas.length : null,
      pass_hat_k: rate(hat),
      pass_at_k: rate(at),
      target_errors: allB.filter((x) => x.stop_reason === "target_error").length,
      simulator_errors: allB.filter((x) => x.stop_reason === "simulator_error").length,
    });
  }
  return { pair_by: "source", a: summary(ea, rowsA), b: summary(eb, rowsB), metrics, cells };
}
