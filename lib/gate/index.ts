/**
 * The CI gate's verdict over finished runs (`bin/turnscope eval` asks for it): per metric and
 * conversation one case, its verdict across repeats (confirm-on-fail: a case fails only when it fails in
 * every repeat), thresholds per case or on the mean, and against a baseline run the cases that flipped,
 * McNemar's exact test for pass/fail and a paired bootstrap interval for score deltas. The data is
 * pinned: the dataset's id and a fingerprint of its content. Statistics come from lib/agreement.
 */
import "server-only";
import { getExecutionRow } from "@/db/repositories/executions";
import { datasetContentHash, gateCellRows, type GateCellRow } from "@/db/repositories/gate";
import { listNodes } from "@/db/repositories/metrics";
import type { PipelineNodeRow } from "@/db/schema";
import { mcnemarExact, pairedBootstrap } from "@/lib/agreement";
import { AppError, notFound } from "@/lib/errors";
import { readingOfResult } from "@/lib/labels/readings";
import { conversationLabel } from "@/lib/conversation-label";
import { isFinalStatus } from "@/lib/execution-status";
import type { GateQuery, GateReport } from "@/lib/schemas/gate";

type CaseRun = { verdict: "pass" | "fail" | "error"; score: number | null; reason: string | null };
type Case = { nodeId: number; conversationId: number; position: number; name: string; runs: CaseRun[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A cell's pass/fail: a checkbox's verdict, a score against the metric's minimum (0.5 without one); null for text. */
function cellPass(node: PipelineNodeRow, row: GateCellRow, min: number | undefined): boolean | null {
  const reading = readingOfResult(node.outputType, row);
  if (typeof reading === "boolean") return reading;
  return typeof reading === "number" ? reading >= (min ?? 0.5) : null;
}

function reasonOf(row: GateCellRow): string | null {
  if (row.status === "failed") return row.error;
  return isObject(row.result) && typeof row.result.reasoning === "string" ? row.result.reasoning : null;
}

/** One run's cases: a conversation's cells of a metric make one case (it passes when all of them do). */
function casesOf(rows: GateCellRow[], nodes: Map<number, PipelineNodeRow>, mins: Map<number, number>): Map<string, Case & { run: CaseRun }> {
  const groups = new Map<string, GateCellRow[]>();
  for (const row of rows) {
    if (!nodes.has(row.pipelineNodeId)) continue;
    const key = `${row.pipelineNodeId}:${row.conversationId}`;
    const list = groups.get(key);
    if (list) list.push(row);
    else groups.set(key, [row]);
  }
  const out = new Map<string, Case & { run: CaseRun }>();
  for (const [key, cells] of groups) {
    const node = nodes.get(cells[0].pipelineNodeId)!;
    const judged = cells.filter((c) => c.status !== "skipped");
    const failedCell = judged.find((c) => c.status === "failed");
    let run: CaseRun;
    if (failedCell || judged.length === 0) run = { verdict: "error", score: null, reason: failedCell ? failedCell.error : "every cell was skipped" };
    else {
      const passes = judged.map((c) => cellPass(node, c, mins.get(node.id)));
      const scores = judged.map((c) => c.score).filter((s): s is number => s !== null);
      const firstFail = judged.find((_, i) => passes[i] === false);
      run = {
        verdict: passes.every((p) => p !== false) ? "pass" : "fail",
        score: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null,
        reason: firstFail ? reasonOf(firstFail) : reasonOf(judged[0]),
      };
    }
    // Named as the grid names it (its name, else its meta id such as task_id 1 · trial 0), never "conversation <id>".
    const name = conversationLabel({ name: cells[0].conversationName, position: cells[0].conversationPosition, meta: cells[0].conversationMeta, firstUser: null });
    out.set(key, { nodeId: node.id, conversationId: cells[0].conversationId, position: cells[0].conversationPosition, name, runs: [], run });
  }
  return out;
}

/** A case across repeats: it passes when any repeat passed (a failure is confirmed by failing every time). */
function settle(runs: CaseRun[]): CaseRun {
  const judged = runs.filter((r) => r.verdict !== "error");
  if (judged.length === 0) return runs[0];
  const scores = judged.map((r) => r.score).filter((s): s is number => s !== null);
  const passed = judged.find((r) => r.verdict === "pass");
  return { verdict: passed ? "pass" : "fail", score: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null, reason: (passed ?? judged[0]).reason };
}

async function finishedRun(id: number) {
  const row = await getExecutionRow(id);
  if (!row) throw notFound("Execution", id);
  if (!isFinalStatus(row.status)) throw new AppError("conflict", `Execution ${id} is still ${row.status}: a gate reads finished runs`);
  return row;
}

export async function gateReport(q: GateQuery): Promise<GateReport> {
  const runs = await Promise.all(q.runs.map(finishedRun));
  const datasetId = runs[0].datasetId;
  for (const run of runs) {
    if (run.datasetId !== datasetId) throw new AppError("unprocessable", `Execution ${run.id} is of dataset ${run.datasetId}, not ${datasetId}`, [{ path: "runs", message: "must be runs of one dataset" }]);
  }
  const baseline = q.baseline === undefined ? undefined : await finishedRun(q.baseline);
  if (baseline && baseline.datasetId !== datasetId) {
    throw new AppError("unprocessable", `The baseline ${baseline.id} is of dataset ${baseline.datasetId}, not ${datasetId}`, [{ path: "baseline", message: `must be a run of dataset ${datasetId}` }]);
  }
  const allNodes = new Map((await listNodes({ datasetId })).map((n) => [n.id, n]));
  const mins = new Map(q.min);
  for (const id of mins.keys()) if (!allNodes.has(id)) throw new AppError("unprocessable", `Metric ${id} is not a metric of dataset ${datasetId}`, [{ path: "min", message: `unknown metric ${id}` }]);

  const rows = await gateCellRows([...q.runs, ...(baseline ? [baseline.id] : [])]);
  const cases = new Map<string, Case>();
  for (const run of q.runs) {
    for (const [key, c] of casesOf(rows.filter((r) => r.executionId === run), allNodes, mins)) {
      const found = cases.get(key) ?? { nodeId: c.nodeId, conversationId: c.conversationId, position: c.position, name: c.name, runs: [] };
      found.runs.push(c.run);
      cases.set(key, found);
    }
  }
  const before = baseline ? casesOf(rows.filter((r) => r.executionId === baseline.id), allNodes, mins) : new Map<string, Case & { run: CaseRun }>();
  const nodeIds = [...new Set([...cases.values()].map((c) => c.nodeId))].sort((a, b) => allNodes.get(a)!.position - allNodes.get(b)!.position);

  const reportCases: GateReport["cases"] = [];
  const metrics: GateReport["metrics"] = nodeIds.map((id) => {
    const node = allNodes.get(id)!;
    const min = mins.get(id);
    // In the dataset's order (a generation's conversations: by source, each source's repeats in turn).
    const mine = [...cases.values()].filter((c) => c.nodeId === id).sort((a, b) => a.position - b.position || a.conversationId - b.conversationId);
    const settled = mine.map((c) => ({ c, now: settle(c.runs), was: before.get(`${c.nodeId}:${c.conversationId}`)?.run }));
    const judged = settled.filter((s) => s.now.verdict !== "error");
    const scores = judged.map((s) => s.now.score).filter((x): x is number => x !== null);
    const mean = scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null;
    const passed = judged.filter((s) => s.now.verdict === "pass").length;
    const failed = judged.length - passed;
    const threshold = min === undefined ? null : q.threshold === "mean" ? { mode: "mean" as const, min, holds: mean !== null && mean >= min } : { mode: "case" as const, min, holds: failed === 0 && judged.length > 0 };

    let regression: GateReport["metrics"][number]["baseline"] = null;
    const flipped: number[] = [];
    if (baseline) {
      const paired = settled.filter((s) => s.now.verdict !== "error" && s.was && s.was.verdict !== "error");
      const worse = paired.filter((s) => s.was!.verdict === "pass" && s.now.verdict === "fail");
      const better = paired.filter((s) => s.was!.verdict === "fail" && s.now.verdict === "pass").length;
      for (const s of worse) flipped.push(s.c.conversationId);
      const deltas = paired.filter((s) => s.now.score !== null && s.was!.score !== null).map((s) => s.now.score! - s.was!.score!);
      const wasScores = paired.map((s) => s.was!.score).filter((x): x is number => x !== null);
      const boot = pairedBootstrap(deltas, { seed: 20261126 });
      const p = mcnemarExact(worse.length, better);
      const significant = (p < q.alpha && worse.length > better) || (boot !== null && node.outputType !== "checkbox" && boot.interval[1] < 0);
      regression = {
        execution_id: baseline.id,
        paired: paired.length,
        mean: wasScores.length ? wasScores.reduce((a, b) => a + b, 0) / wasScores.length : null,
        delta: boot ? { estimate: boot.mean, interval: boot.interval } : null,
        pass_to_fail: worse.length,
        fail_to_pass: better,
        mcnemar_p: p,
        regressed: significant || worse.length > 0,
        why: significant ? (p < q.alpha && worse.length > better ? `significant drop (McNemar p = ${p.toPrecision(3)})` : "scores dropped: the 95% interval of the mean delta is below 0") : worse.length > 0 ? `${worse.length} case(s) passed in the baseline and fail in every repeat now` : null,
      };
    }
    for (const s of settled) {
      reportCases.push({
        pipeline_node_id: id,
        metric: node.name,
        conversation_id: s.c.conversationId,
        conversation: s.c.name,
        verdict: s.now.verdict,
        score: s.now.score,
        repeats: s.c.runs.map((r) => r.verdict),
        reason: s.now.reason,
        baseline: s.was ? s.was.verdict : null,
        flipped: flipped.includes(s.c.conversationId),
      });
    }
    const errorOnly = judged.length === 0;
    return {
      pipeline_node_id: id,
      name: node.name,
      output_type: node.outputType,
      cases: settled.length,
      passed,
      failed,
      errors: settled.length - judged.length,
      mean_score: mean,
      threshold,
      baseline: regression,
      status: errorOnly ? "error" : (threshold && !threshold.holds) || regression?.regressed ? "fail" : "pass",
    };
  });
  const status: GateReport["status"] = metrics.length === 0 || metrics.some((m) => m.status === "error") ? "error" : metrics.some((m) => m.status === "fail") ? "fail" : "pass";
  return {
    status,
    dataset: { id: datasetId, ...(await datasetContentHash(datasetId)) },
    runs: q.runs,
    baseline: baseline?.id ?? null,
    metrics,
    cases: reportCases,
  };
}
