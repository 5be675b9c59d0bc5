/** Online rules: create, read, change and delete them, as the API shows them (with today's spend). */
import "server-only";
import * as repo from "@/db/repositories/online";
import { listNodes } from "@/db/repositories/metrics";
import type { OnlineRuleRow } from "@/db/schema";
import { assertDatasetExists } from "@/lib/datasets";
import { AppError, notFound } from "@/lib/errors";
import { costOf, resolveModelName } from "@/lib/judge";
import { parseGridExtras } from "@/lib/results/grid";
import type { CreateRuleBody, OnlineRule, UpdateRuleBody } from "@/lib/schemas/online";

/** Midnight UTC of the day `now` is in: a rule's daily budget starts again then. */
export function dayStart(now: Date): string {
  return `${now.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

/** What the rule's runs cost since midnight UTC (priced calls only). */
export async function spentToday(ruleId: number, now: Date = new Date()): Promise<number> {
  let spent = 0;
  for (const t of await repo.ruleTokensSince(ruleId, dayStart(now))) spent += costOf(t.model ?? "", t.inputTokens, t.outputTokens) ?? 0;
  return spent;
}

async function toWire(row: OnlineRuleRow): Promise<OnlineRule> {
  return {
    id: row.id,
    dataset_id: row.datasetId,
    pipeline_node_ids: row.pipelineNodeIds,
    filter: row.filter,
    sample_rate: row.sampleRate,
    idle_seconds: row.idleSeconds,
    max_cost_usd_per_day: row.maxCostUsdPerDay,
    enabled: row.enabled,
    spent_usd_today: await spentToday(row.id),
    evaluated: row.evaluated,
    last_error: row.lastError,
    last_error_at: row.lastErrorAt,
    user_id: row.userId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** 422 unless every metric is one of the dataset's, and the filter reads as a conversation-level grid filter. */
async function checkSelection(datasetId: number, nodeIds: number[] | undefined, filter: string | null | undefined): Promise<void> {
  if (nodeIds) {
    const mine = new Set((await listNodes({ datasetId })).map((n) => n.id));
    const foreign = nodeIds.filter((id) => !mine.has(id));
    if (foreign.length) {
      throw new AppError("unprocessable", `Metric ${foreign.join(", ")} is not a metric of dataset ${datasetId}`, [
        { path: "pipeline_node_ids", message: "must be metrics of this dataset" },
      ]);
    }
  }
  if (filter) await parseGridExtras(datasetId, { level: "conversation", filter, limit: 1, offset: 0 });
}

/**
 * 422 when a daily cap could never be reached: a judge metric of the rule whose model has no price
 * (JUDGE_PRICES) costs nothing as far as the cap can tell (a $1 cap was accepted and never triggered).
 */
async function checkCap(datasetId: number, nodeIds: number[], cap: number | null | undefined): Promise<void> {
  if (cap === null || cap === undefined) return;
  const wanted = new Set(nodeIds);
  const unpriced = new Set<string>();
  for (const node of await listNodes({ datasetId })) {
    if (!wanted.has(node.id) || node.kind === "check") continue;
    const model = resolveModelName(null, node.modelName);
    if (costOf(model, 1, 1) === null) unpriced.add(model);
  }
  if (unpriced.size) {
    throw new AppError("unprocessable", `max_cost_usd_per_day could never be reached: no price is set for ${[...unpriced].join(", ")} (set JUDGE_PRICES), so its calls count nothing`, [
      { path: "max_cost_usd_per_day", message: `needs a price for ${[...unpriced].join(", ")} in JUDGE_PRICES` },
    ]);
  }
}

export async function createRule(body: CreateRuleBody, userId: string): Promise<OnlineRule> {
  await assertDatasetExists(body.dataset_id);
  await checkSelection(body.dataset_id, body.pipeline_node_ids, body.filter);
  await checkCap(body.dataset_id, body.pipeline_node_ids, body.max_cost_usd_per_day);
  const row = await repo.insertRule({
    datasetId: body.dataset_id,
    userId,
    pipelineNodeIds: [...new Set(body.pipeline_node_ids)],
    filter: body.filter ?? null,
    sampleRate: body.sample_rate,
    idleSeconds: body.idle_seconds,
    maxCostUsdPerDay: body.max_cost_usd_per_day,
    enabled: body.enabled,
  });
  return toWire(row);
}

export async function getRule(id: number): Promise<OnlineRule> {
  const row = await repo.getRule(id);
  if (!row) throw notFound("Online rule", id);
  return toWire(row);
}

export async function listRules(datasetId?: number): Promise<OnlineRule[]> {
  if (datasetId !== undefined) await assertDatasetExists(datasetId);
  return Promise.all((await repo.listRules({ datasetId })).map(toWire));
}

export async function updateRule(id: number, body: UpdateRuleBody): Promise<OnlineRule> {
  const row = await repo.getRule(id);
  if (!row) throw notFound("Online rule", id);
  await checkSelection(row.datasetId, body.pipeline_node_ids, body.filter);
  await checkCap(row.datasetId, body.pipeline_node_ids ?? row.pipelineNodeIds, body.max_cost_usd_per_day === undefined ? row.maxCostUsdPerDay : body.max_cost_usd_per_day);
  const updated = await repo.updateRule(id, {
    pipelineNodeIds: body.pipeline_node_ids && [...new Set(body.pipeline_node_ids)],
    filter: body.filter === undefined ? undefined : body.filter,
    sampleRate: body.sample_rate,
    idleSeconds: body.idle_seconds,
    maxCostUsdPerDay: body.max_cost_usd_per_day,
    enabled: body.enabled,
  });
  if (!updated) throw notFound("Online rule", id);
  return toWire(updated);
}

export async function deleteRule(id: number): Promise<void> {
  if (!(await repo.deleteRule(id))) throw notFound("Online rule", id);
}
