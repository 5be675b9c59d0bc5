/** lib/runner: plan, schedule, execute, persist, cancel, recover, events. */
export { emit, progressOf, subscribe, type RunEvent } from "./events";
export { planRun, type Cell, type Plan, type Scope } from "./plan";
export {
  cancelExecution,
  deleteDatasetStoppingRuns,
  drainRuns,
  isDraining,
  isRunning,
  recoverInterruptedExecutions,
  startExecution,
  waitForExecution,
  type RunnerDeps,
} from "./run";
export { handleCellBatch, runsAreQueued, startClusterRunner } from "./cluster-run";
export { executionEventStream } from "./stream";
export { getExecution, listExecutions } from "./queries";
export { conversationGoal } from "./goal";
export { estimateRun } from "./estimate";
