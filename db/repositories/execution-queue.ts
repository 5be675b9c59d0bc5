/**
 * What a queued run (lib/cluster, PostgreSQL) keeps on its execution row, updated in one statement each
 * so that the processes working its cells count together.
 */
import "server-only";
import { dialect } from "../dialect";
import { rawRun } from "../store";

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
