/**
 * What a queued run (lib/cluster, PostgreSQL) keeps on its execution row, updated in one statement each
 * so that the processes working its cells count together.
 */
import "server-only";
import { dialect } from "../dialect";
import { lockRow, raw, rawExec, rawRows, rawRun, transaction } from "../store";

/** Add to `meta.rate_limits` in one statement: processes running cells of one execution count together. */
export async function addExecutionRateLimits(id: number, n: number): Promise<void> {
  await rawRun(dialect.addMetaCountSql("rate_limits"), [n, id]);
}

/** Add to a queued run's count of hedged requests (meta.hedges), as its processes send them. */
export async function addExecutionHedges(id: number, n: number): Promise<void> {
  await rawRun(dialect.addMetaCountSql("hedges"), [n, id]);
}

/**
 * Move a queued execution from dependency wave `wave` to the next, whose `enqueued` is the count of
 * cells of every wave so far: only while every cell enqueued so far has its result counted, and only
 * once — the one caller that gets true enqueues the next wave (meta.queue holds wave and enqueued).
 */
export async function claimNextWave(id: number, wave: number, enqueued: number): Promise<boolean> {
  const changed = await rawRun(dialect.claimNextWaveSql, [wave + 1, enqueued, id, wave]);
  return changed > 0;
}

/**
 * The tokens and cost of a judge reply of a queued run that was not saved (its budget was reached while
 * the call was out, or the run had ended): the provider billed it, so the run counts it. Under the run's
 * row lock: while the run is active into `unsaved_*` (its end adds them to its totals), once ended into
 * its totals directly.
 */
export async function addUnsavedUsage(executionId: number, inputTokens: number, outputTokens: number, costUsd: number | null): Promise<void> {
  await transaction(function* () {
    yield* lockRow("pipeline_executions", executionId);
    const rows = yield* raw<{ status: string; meta: unknown }>("select status, meta from pipeline_executions where id = ?", [executionId]);
    if (!rows[0]) return;
    const meta = (typeof rows[0].meta === "string" ? JSON.parse(rows[0].meta) : (rows[0].meta ?? {})) as Record<string, unknown>;
    const add = (key: string, n: number | null) => {
      if (n === null) meta[key] = null;
      else if (meta[key] !== null) meta[key] = Number(meta[key] ?? 0) + n;
    };
    const ended = !["pending", "processing"].includes(rows[0].status);
    add(ended ? "input_tokens" : "unsaved_input_tokens", inputTokens);
    add(ended ? "output_tokens" : "unsaved_output_tokens", outputTokens);
    add(ended ? "cost_usd" : "unsaved_cost_usd", costUsd);
    meta.unsaved_replies = Number(meta.unsaved_replies ?? 0) + 1;
    yield* rawExec("update pipeline_executions set meta = ? where id = ?", [JSON.stringify(meta), executionId]);
  });
}

/** The cost of a running queued run's calls counted without a result so far (meta.unsaved_cost_usd). */
export async function unsavedCostOf(executionId: number): Promise<number> {
  const rows = await rawRows<{ meta: unknown }>("select meta from pipeline_executions where id = ?", [executionId]);
  const meta = (typeof rows[0]?.meta === "string" ? JSON.parse(rows[0].meta) : (rows[0]?.meta ?? {})) as { unsaved_cost_usd?: number | null };
  return meta.unsaved_cost_usd ?? 0;
}
