/**
 * The one place the run engine is chosen, once per process: queued batches any process of the cluster
 * works when the store is shared by processes (PostgreSQL: db/dialect's queuesRuns; cluster-run.ts), else in the process that started the run
 * (in-process.ts). Everything else asks the engine (lifecycle.ts says what one is).
 */
import "server-only";
import { dialect } from "@/db/dialect";
import { processSingleton } from "@/lib/process-state";
import { queuedEngine } from "./cluster-run";
import { inProcessEngine } from "./in-process";
import type { RunEngine } from "./lifecycle";

/** This process's engine. */
export function runEngine(): RunEngine {
  return processSingleton("runner.engine", () => (dialect.queuesRuns ? queuedEngine : inProcessEngine));
}
