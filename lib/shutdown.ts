/** Graceful shutdown on SIGTERM/SIGINT: drain runs, give generations back, close the database, exit. Installed once per process. */
import { closeDb } from "@/db/sqlite-database";
import { closePgDb } from "@/db/pg";
import { getConfig } from "@/lib/config";
import { exitByDeadline } from "@/lib/exit-deadline";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { stopOnlineSweep } from "@/lib/online";
import { drainRuns } from "@/lib/runner";
import { drainGenerations } from "@/lib/generation/queue";
import { flushEvaluationExport } from "@/lib/otel/export";
import { stopRetentionSweep } from "@/lib/otel/retention";

export function installShutdownHandlers(): void {
  const state = processSingleton("shutdown.installed", () => ({ installed: false, started: false }));
  if (state.installed) return;
  state.installed = true;
  const onSignal = (signal: NodeJS.Signals) => {
    if (state.started) return;
    state.started = true;
    const graceMs = getConfig().SHUTDOWN_GRACE_MS;
    log.info("shutting down", { signal, grace_ms: graceMs });
    exitByDeadline(graceMs, "shutdown");
    // No rule starts a run once the runs are being drained; a retention pass in progress ends its batch.
    Promise.all([stopOnlineSweep(), stopRetentionSweep()])
      .then(() => Promise.all([drainRuns(graceMs), drainGenerations(graceMs)]))
      .then(([runs, generations]) => log.info("runs drained", { ...runs, generations }))
      .catch((error) => log.error("drain failed", { error }))
      // Verdicts still queued for the traces (OTEL_EVALUATION_ENDPOINT) are sent, for a second at most.
      .then(() => Promise.race([flushEvaluationExport().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]))
      .finally(() => {
        closeDb();
        closePgDb()
          .catch((error) => log.error("closing PostgreSQL failed", { error }))
          .finally(() => process.exit(0));
      });
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.on("SIGHUP", onSignal);
  // Started by `npm start` (scripts/start.mjs) with an IPC channel: when that process is gone, however
  // it went, the channel closes and the server it started stops too.
  if (typeof process.send === "function") process.on("disconnect", () => onSignal("SIGTERM"));
}
