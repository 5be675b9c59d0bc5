/**
 * Online rules (lib/online) and the run estimates they and the grid ask for: the rules, which revision
 * of each live conversation a rule has taken (claimed once, in one statement), the runs a rule started
 * and what they spent, and the Live page's reads.
 */
import "server-only";
import type { OnlineRuleRow } from "../schema";
import { dialect } from "../dialect";
import { placeholders, rawRows, rawRun } from "../store";

const onPostgres = dialect.name === "postgres";

const bool = (v: boolean) => dialect.booleanParam(v);
const num = (v: number | string | null) => (v === null ? null : Number(v));

/** Average reply tokens of each metric's judged (not cached) results so far. */
export async function averageOutputTokens(nodeIds: number[]): Promise<Map<number, number>> {
  if (nodeIds.length === 0) return new Map();
  const rows = await rawRows<{ id: number; avg: number | string | null }>(
    `select pipeline_node_id as id, avg(output_tokens) as avg from evaluation_results
     where pipeline_node_id in (${placeholders(nodeIds.length)}) and status = 'completed' and output_tokens > 0
     group by pipeline_node_id`,
    nodeIds,
  );
  return new Map(rows.filter((r) => r.avg !== null).map((r) => [r.id, Number(r.avg)]));
}

type RuleRecord = {
  id: number;
  dataset_id: number;
  user_id: string;
  pipeline_node_ids: string | number[];
  filter: string | null;
  sample_rate: number;
  idle_seconds: number;
  max_cost_usd_per_day: number | null;
  enabled: number | boolean;
  evaluated: number;
  last_error: string | null;
  last_error_at: string | null;
  swept_until: string | null;
  sweep_lease_until: string | null;
  created_at: string;
  updated_at: string;
};

const COLUMNS =
  "id, dataset_id, user_id, pipeline_node_ids, filter, sample_rate, idle_seconds, max_cost_usd_per_day, enabled, evaluated, last_error, last_error_at, swept_until, sweep_lease_until, created_at, updated_at";

function toRow(r: RuleRecord): OnlineRuleRow {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    userId: r.user_id,
    pipelineNodeIds: typeof r.pipeline_node_ids === "string" ? (JSON.parse(r.pipeline_node_ids) as number[]) : r.pipeline_node_ids,
    filter: r.filter,
    sampleRate: Number(r.sample_rate),
    idleSeconds: r.idle_seconds,
    maxCostUsdPerDay: num(r.max_cost_usd_per_day),
    enabled: Boolean(r.enabled),
    evaluated: Number(r.evaluated),
    lastError: r.last_error,
    lastErrorAt: r.last_error_at,
    sweptUntil: r.swept_until,
    sweepLeaseUntil: r.sweep_lease_until,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export type RuleValues = {
  datasetId: number;
  userId: string;
  pipelineNodeIds: number[];
  filter: string | null;
  sampleRate: number;
  idleSeconds: number;
  maxCostUsdPerDay: number | null;
  enabled: boolean;
};

export async function insertRule(v: RuleValues): Promise<OnlineRuleRow> {
  const now = new Date().toISOString();
  const rows = await rawRows<RuleRecord>(
    `insert into online_rules (dataset_id, user_id, pipeline_node_ids, filter, sample_rate, idle_seconds, max_cost_usd_per_day, enabled, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning ${COLUMNS}`,
    [v.datasetId, v.userId, JSON.stringify(v.pipelineNodeIds), v.filter, v.sampleRate, v.idleSeconds, v.maxCostUsdPerDay, bool(v.enabled), now, now],
  );
  return toRow(rows[0]);
}

export async function getRule(id: number): Promise<OnlineRuleRow | undefined> {
  const rows = await rawRows<RuleRecord>(`select ${COLUMNS} from online_rules where id = ?`, [id]);
  return rows[0] && toRow(rows[0]);
}

/** Rules of a dataset, or every rule; `enabledOnly` for the sweep. */
export async function listRules(opts: { datasetId?: number; enabledOnly?: boolean } = {}): Promise<OnlineRuleRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (opts.datasetId !== undefined) {
    where.push("dataset_id = ?");
    params.push(opts.datasetId);
  }
  if (opts.enabledOnly) where.push(onPostgres ? "enabled" : "enabled <> 0");
  const rows = await rawRows<RuleRecord>(`select ${COLUMNS} from online_rules${where.length ? ` where ${where.join(" and ")}` : ""} order by id`, params);
  return rows.map(toRow);
}

/** Write the given fields; a change of what the rule selects (metrics, filter) leaves the conversations taken as they are. */
export async function updateRule(id: number, v: Partial<Omit<RuleValues, "datasetId" | "userId">>): Promise<OnlineRuleRow | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [];
  const set = (column: string, value: unknown) => {
    sets.push(`${column} = ?`);
    params.push(value);
  };
  if (v.pipelineNodeIds !== undefined) set("pipeline_node_ids", JSON.stringify(v.pipelineNodeIds));
  if (v.filter !== undefined) set("filter", v.filter);
  if (v.sampleRate !== undefined) set("sample_rate", v.sampleRate);
  if (v.idleSeconds !== undefined) set("idle_seconds", v.idleSeconds);
  if (v.maxCostUsdPerDay !== undefined) set("max_cost_usd_per_day", v.maxCostUsdPerDay);
  if (v.enabled !== undefined) set("enabled", bool(v.enabled));
  set("updated_at", new Date().toISOString());
  const rows = await rawRows<RuleRecord>(`update online_rules set ${sets.join(", ")} where id = ? returning ${COLUMNS}`, [...params, id]);
  return rows[0] && toRow(rows[0]);
}

export async function deleteRule(id: number): Promise<boolean> {
  return (await rawRun("delete from online_rules where id = ?", [id])) > 0;
}

/**
 * Take the rule's sweep for `leaseMs` unless another process holds it: one statement, so two
 * processes never sweep one rule at once. False when it is held.
 */
export async function takeSweepLease(ruleId: number, now: Date, leaseMs: number): Promise<boolean> {
  const rows = await rawRows<{ id: number }>(
    "update online_rules set sweep_lease_until = ? where id = ? and (sweep_lease_until is null or sweep_lease_until < ?) returning id",
    [new Date(now.getTime() + leaseMs).toISOString(), ruleId, now.toISOString()],
  );
  return rows.length > 0;
}

/**
 * Move the rule's sweep lease from `from` (what its holder last wrote) to `until`; false when the lease is
 * no longer the holder's (given back, or taken by another process once it ran out).
 */
export async function renewSweepLease(ruleId: number, from: string, until: string): Promise<boolean> {
  const rows = await rawRows<{ id: number }>("update online_rules set sweep_lease_until = ? where id = ? and sweep_lease_until = ? returning id", [until, ruleId, from]);
  return rows.length > 0;
}

/** Give the sweep back; `sweptUntil`: move the rule's watermark (every conversation last active before it was considered). */
export async function releaseSweepLease(ruleId: number, sweptUntil?: string): Promise<void> {
  if (sweptUntil === undefined) await rawRun("update online_rules set sweep_lease_until = null where id = ?", [ruleId]);
  else await rawRun("update online_rules set sweep_lease_until = null, swept_until = ? where id = ?", [sweptUntil, ruleId]);
}

export type ClaimedConversation = { otelConversationId: number; conversationId: number; revision: number };

/**
 * Claim, in one statement, up to `limit` of the dataset's live conversations that finished (last span at
 * or before `finishedBy`, after `after`), are rebuilt up to their latest revision, and whose revision the
 * rule has not taken yet. The insert-or-raise on (rule, conversation) only succeeds while the stored
 * revision is lower, so across processes a revision is claimed exactly once. A claim nobody decided on
 * (`decided_at` null: the sweeping process died between its claim and its run) is claimed again once it
 * is older than `staleBefore`, so a death costs a lease, not the conversation.
 */
export async function claimFinishedConversations(
  ruleId: number,
  datasetId: number,
  opts: { after: string; finishedBy: string; now: string; staleBefore: string; limit: number },
): Promise<ClaimedConversation[]> {
  const rows = await rawRows<{ otel_conversation_id: number; revision: number }>(
    `insert into online_rule_conversations (rule_id, otel_conversation_id, revision, sampled, claimed_at)
     select ?, oc.id, oc.revision, ?, ? from otel_conversations oc
     left join online_rule_conversations rc on rc.rule_id = ? and rc.otel_conversation_id = oc.id
     where oc.dataset_id = ? and oc.last_span_at > ? and oc.last_span_at <= ? and oc.conversation_id is not null
       and oc.assembled_revision >= oc.revision
       and (rc.revision is null or rc.revision < oc.revision or (rc.decided_at is null and rc.claimed_at < ?))
     order by oc.last_span_at, oc.id limit ?
     on conflict (rule_id, otel_conversation_id) do update
       set revision = excluded.revision, sampled = excluded.sampled, execution_id = null, claimed_at = excluded.claimed_at, decided_at = null
       where online_rule_conversations.revision < excluded.revision
         or (online_rule_conversations.decided_at is null and online_rule_conversations.claimed_at < ?)
     returning otel_conversation_id, revision`,
    [ruleId, bool(false), opts.now, ruleId, datasetId, opts.after, opts.finishedBy, opts.staleBefore, opts.limit, opts.staleBefore],
  );
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.otel_conversation_id);
  const convs = await rawRows<{ id: number; conversation_id: number | null }>(
    `select id, conversation_id from otel_conversations where id in (${placeholders(ids.length)})`,
    ids,
  );
  const conversationOf = new Map(convs.map((c) => [c.id, c.conversation_id]));
  return rows.flatMap((r) => {
    const conversationId = conversationOf.get(r.otel_conversation_id);
    return conversationId == null ? [] : [{ otelConversationId: r.otel_conversation_id, conversationId, revision: r.revision }];
  });
}

/** The oldest last-span time of the dataset's conversations not yet rebuilt up to their revision (the watermark must wait for them). */
export async function oldestUnassembled(datasetId: number): Promise<string | undefined> {
  const rows = await rawRows<{ at: string | null }>(
    "select min(last_span_at) as at from otel_conversations where dataset_id = ? and assembled_revision < revision",
    [datasetId],
  );
  return rows[0]?.at ?? undefined;
}

/**
 * Give back the conversations a rule's run never reached because its budget stopped it (no result of
 * that run for them): they are claimed again by a later sweep (once the daily budget allows), the rule's
 * `evaluated` and the run's count drop by them, and the rule's watermark moves back so the sweep sees them.
 * Returns how many were given back.
 */
export async function releaseUnevaluatedOfBudgetStops(ruleId: number): Promise<number> {
  const rows = await rawRows<{ otel_conversation_id: number; execution_id: number; last_span_at: string; meta: unknown }>(
    `select rc.otel_conversation_id, rc.execution_id, oc.last_span_at, e.meta from online_rule_conversations rc
     join otel_conversations oc on oc.id = rc.otel_conversation_id
     join pipeline_executions e on e.id = rc.execution_id
     where rc.rule_id = ? and e.status = 'cancelled'
       and not exists (select 1 from evaluation_results r where r.execution_id = rc.execution_id and r.conversation_id = oc.conversation_id)`,
    [ruleId],
  );
  const stopped = rows.filter((r) => {
    const meta = typeof r.meta === "string" ? (JSON.parse(r.meta) as Record<string, unknown>) : (r.meta as Record<string, unknown> | null);
    return meta?.stop_reason === "budget";
  });
  if (stopped.length === 0) return 0;
  const ids = stopped.map((r) => r.otel_conversation_id);
  await rawRun(`delete from online_rule_conversations where rule_id = ? and otel_conversation_id in (${placeholders(ids.length)})`, [ruleId, ...ids]);
  const perRun = new Map<number, number>();
  for (const r of stopped) perRun.set(r.execution_id, (perRun.get(r.execution_id) ?? 0) + 1);
  for (const [executionId, n] of perRun) await rawRun("update online_rule_runs set conversations = conversations - ? where rule_id = ? and execution_id = ?", [n, ruleId, executionId]);
  const earliest = stopped.map((r) => r.last_span_at).sort()[0];
  await rawRun("update online_rules set evaluated = evaluated - ?, swept_until = case when swept_until is null or swept_until > ? then ? else swept_until end where id = ?", [stopped.length, earliest, earliest, ruleId]);
  return stopped.length;
}

/** Record the sampled conversations' run (or that a claimed conversation was not sampled: executionId null). */
export async function markTaken(ruleId: number, otelConversationIds: number[], executionId: number | null, decidedAt: string): Promise<void> {
  if (otelConversationIds.length === 0) return;
  await rawRun(
    `update online_rule_conversations set sampled = ?, execution_id = ?, decided_at = ? where rule_id = ? and otel_conversation_id in (${placeholders(otelConversationIds.length)})`,
    [bool(executionId !== null), executionId, decidedAt, ruleId, ...otelConversationIds],
  );
}

/** A run the rule started, and how many conversations it evaluates. */
export async function recordRuleRun(ruleId: number, executionId: number, conversations: number, startedAt: string): Promise<void> {
  await rawRun("insert into online_rule_runs (rule_id, execution_id, conversations, started_at) values (?, ?, ?, ?)", [ruleId, executionId, conversations, startedAt]);
  await rawRun("update online_rules set evaluated = evaluated + ?, last_error = null, last_error_at = null where id = ?", [conversations, ruleId]);
}

export async function recordRuleError(ruleId: number, message: string, at: string): Promise<void> {
  await rawRun("update online_rules set last_error = ?, last_error_at = ? where id = ?", [message.slice(0, 2000), at, ruleId]);
}

/** Whether a run the rule started is still pending or processing. */
export async function ruleHasActiveRun(ruleId: number): Promise<boolean> {
  const rows = await rawRows<{ n: number | string }>(
    "select count(*) as n from online_rule_runs r join pipeline_executions e on e.id = r.execution_id where r.rule_id = ? and e.status in ('pending', 'processing')",
    [ruleId],
  );
  return Number(rows[0]?.n ?? 0) > 0;
}

/**
 * Tokens per model of the results the rule's runs saved since `since` (runs started up to a day before
 * it are looked at, so a run that went on past midnight counts its later cells in the new day).
 */
export async function ruleTokensSince(ruleId: number, since: string): Promise<Array<{ model: string | null; inputTokens: number; outputTokens: number }>> {
  const runsFrom = new Date(Date.parse(since) - 86_400_000).toISOString();
  const rows = await rawRows<{ model: string | null; input_tokens: number | string | null; output_tokens: number | string | null }>(
    `select r.model_name as model, sum(r.input_tokens) as input_tokens, sum(r.output_tokens) as output_tokens
     from online_rule_runs rr join evaluation_results r on r.execution_id = rr.execution_id
     where rr.rule_id = ? and rr.started_at >= ? and r.created_at >= ?
     group by r.model_name`,
    [ruleId, runsFrom, since],
  );
  return rows.map((r) => ({ model: r.model, inputTokens: Number(r.input_tokens ?? 0), outputTokens: Number(r.output_tokens ?? 0) }));
}

/** Tokens per model of an execution's results with an id above `afterId`, and the highest id read (a run's spend, read incrementally). */
export async function resultTokensSince(
  executionId: number,
  afterId: number,
): Promise<Array<{ model: string | null; inputTokens: number; outputTokens: number; maxId: number }>> {
  const rows = await rawRows<{ model: string | null; input_tokens: number | string; output_tokens: number | string; max_id: number | string }>(
    `select model_name as model, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, max(id) as max_id
     from evaluation_results where execution_id = ? and id > ? group by model_name`,
    [executionId, afterId],
  );
  return rows.map((r) => ({ model: r.model, inputTokens: Number(r.input_tokens), outputTokens: Number(r.output_tokens), maxId: Number(r.max_id) }));
}

export type LiveConversationRow = {
  id: number;
  conversationId: number | null;
  key: string;
  name: string | null;
  messages: number;
  spanCount: number;
  revision: number;
  firstSpanAt: string;
  lastSpanAt: string;
  evaluatedRevision: number | null;
};

/** The dataset's most recently active live conversations, with the latest revision a rule sent for evaluation. */
export async function recentLiveConversations(datasetId: number, limit: number): Promise<LiveConversationRow[]> {
  const rows = await rawRows<{
    id: number;
    conversation_id: number | null;
    key: string;
    name: string | null;
    messages: number | string | null;
    span_count: number;
    revision: number;
    first_span_at: string;
    last_span_at: string;
    evaluated_revision: number | string | null;
  }>(
    `select oc.id, oc.conversation_id, oc.key, c.name, (select count(*) from messages m where m.conversation_id = oc.conversation_id) as messages,
       oc.span_count, oc.revision, oc.first_span_at, oc.last_span_at,
       (select max(rc.revision) from online_rule_conversations rc where rc.otel_conversation_id = oc.id and rc.sampled = ?) as evaluated_revision
     from otel_conversations oc left join conversations c on c.id = oc.conversation_id
     where oc.dataset_id = ? order by oc.last_span_at desc, oc.id desc limit ?`,
    [bool(true), datasetId, limit],
  );
  return rows.map((r) => ({
    id: r.id,
    conversationId: r.conversation_id,
    key: r.key,
    name: r.name,
    messages: Number(r.messages ?? 0),
    spanCount: r.span_count,
    revision: r.revision,
    firstSpanAt: r.first_span_at,
    lastSpanAt: r.last_span_at,
    evaluatedRevision: num(r.evaluated_revision),
  }));
}

/** Mean score per metric per hour or day (UTC, by when the result was saved) of the dataset's completed results since `since`. */
export async function scoreBuckets(datasetId: number, bucket: "hour" | "day", since: string): Promise<Array<{ bucket: string; nodeId: number; mean: number; count: number }>> {
  // ISO text: the first 13 characters are the hour, the first 10 the day, on both stores.
  const width = bucket === "hour" ? 13 : 10;
  const rows = await rawRows<{ bucket: string; node_id: number; mean: number | string; n: number | string }>(
    `select substr(created_at, 1, ${width}) as bucket, pipeline_node_id as node_id, avg(score) as mean, count(*) as n
     from evaluation_results where dataset_id = ? and status = 'completed' and score is not null and created_at >= ?
     group by substr(created_at, 1, ${width}), pipeline_node_id order by bucket, node_id`,
    [datasetId, since],
  );
  return rows.map((r) => ({
    bucket: bucket === "hour" ? `${r.bucket}:00:00.000Z` : `${r.bucket}T00:00:00.000Z`,
    nodeId: r.node_id,
    mean: Number(r.mean),
    count: Number(r.n),
  }));
}

export type RuleFailureRow = {
  resultId: number;
  executionId: number;
  nodeId: number;
  conversationId: number;
  entityType: string;
  entityId: number;
  error: string | null;
  createdAt: string;
};

/** The last failed cells of the runs the dataset's rules started. */
export async function recentRuleFailures(datasetId: number, limit: number): Promise<RuleFailureRow[]> {
  const rows = await rawRows<{
    id: number;
    execution_id: number;
    pipeline_node_id: number;
    conversation_id: number;
    entity_type: string;
    entity_id: number;
    error: string | null;
    created_at: string;
  }>(
    `select r.id, r.execution_id, r.pipeline_node_id, r.conversation_id, r.entity_type, r.entity_id, r.error, r.created_at
     from evaluation_results r
     where r.dataset_id = ? and r.status = 'failed'
       and r.execution_id in (select rr.execution_id from online_rule_runs rr join online_rules o on o.id = rr.rule_id where o.dataset_id = ?)
     order by r.id desc limit ?`,
    [datasetId, datasetId, limit],
  );
  return rows.map((r) => ({
    resultId: r.id,
    executionId: r.execution_id,
    nodeId: r.pipeline_node_id,
    conversationId: r.conversation_id,
    entityType: r.entity_type,
    entityId: r.entity_id,
    error: r.error,
    createdAt: r.created_at,
  }));
}

/** Give back claims whose run could not start, so the next sweep takes those conversations again. */
export async function releaseClaims(ruleId: number, otelConversationIds: number[]): Promise<void> {
  if (otelConversationIds.length === 0) return;
  await rawRun(
    `delete from online_rule_conversations where rule_id = ? and execution_id is null and otel_conversation_id in (${placeholders(otelConversationIds.length)})`,
    [ruleId, ...otelConversationIds],
  );
}
