/**
 * Runs once when the server starts: open and migrate the database, on PostgreSQL start this process's
 * share of the queued runs' work, claim queued generations, mark executions a dead server left running as interrupted, and
 * start the online rules' sweep, and install the graceful-shutdown handlers.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // Each request is stamped with its socket's address as it arrives, so failed credentials are counted
  // per real client, never per a header the client wrote (lib/api/client-address.ts).
  const { installPeerStamp } = await import("@/lib/api/client-address");
  installPeerStamp();
  // The store of DATABASE_URL (PostgreSQL) or DATABASE_PATH (SQLite), migrated and seeded before the first request.
  const { database } = await import("@/db/store");
  await database();
  // The run engine, chosen once for the store: on PostgreSQL this process's share of the queued runs' work.
  const { startRunner } = await import("@/lib/runner");
  await startRunner();
  // Alignments a stopped server left unfinished (SQLite) end failed, saying so; on either store every
  // process ends those whose process died (their lease ran out) and hears cancels from the others (lib/jobs).
  const { alignmentJobs } = await import("@/lib/align");
  await alignmentJobs.boot();
  // Generations: this process claims queued ones (and takes up those a stopped process left) from now on.
  const { startGenerationQueue } = await import("@/lib/generation/queue");
  await startGenerationQueue();
  // The judge thread loads and warms up now rather than on a run's first calls (lib/judge/call-thread.ts).
  // Not awaited: the server starts serving meanwhile, and calls sent before it is warm simply queue.
  const { getJudgeConfig } = await import("@/lib/judge");
  const judge = getJudgeConfig();
  if (judge.configured && judge.callsOnThread) {
    const { warmJudgeThread } = await import("@/lib/judge/call-thread");
    void warmJudgeThread();
  }
  // Conversations whose spans arrived before a stop and were not rebuilt yet are rebuilt now (lib/otel/ingest.ts).
  const { scheduleAssembly, threadStore } = await import("@/lib/otel/ingest");
  scheduleAssembly();
  // Exports a stopped server answered but had not stored yet (SQLite's trace inbox, lib/otel/inbox.ts) are stored now.
  const spanStore = await threadStore();
  if (spanStore) (await import("@/lib/otel/inbox")).storeWaitingExports(spanStore);
  // Comparisons a stopped server left unfinished (SQLite) end failed, saying so; on either store every
  // process ends those whose process died (their lease ran out) and hears cancels from the others (lib/jobs).
  const { comparisonJobs } = await import("@/lib/comparisons");
  await comparisonJobs.boot();
  // Online rules: this process sweeps for finished live conversations every ONLINE_SWEEP_INTERVAL_MS.
  const { startOnlineSweep } = await import("@/lib/online");
  startOnlineSweep();
  // Verdicts back onto the traces, when OTEL_EVALUATION_ENDPOINT is set (lib/otel/export.ts).
  const { startEvaluationExport } = await import("@/lib/otel/export");
  startEvaluationExport();
  // Spans of live conversations quiet past OTEL_RETENTION_DAYS are deleted in the background (lib/otel/retention.ts).
  const { startRetentionSweep } = await import("@/lib/otel/retention");
  startRetentionSweep();
  const { installShutdownHandlers } = await import("@/lib/shutdown");
  installShutdownHandlers();
}
