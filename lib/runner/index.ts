/** lib/runner: plan, schedule, execute, persist, cancel, recover, events. */
export { emit, progressOf, subscribe, type RunEvent } from "./events";
export { planRun, type Cell, type Plan, type Scope } from "./plan";
export {
  cancelExecution,
  deleteDatasetStoppingRuns,
  drainRuns,
  isDraining,
  recoverInterruptedExecutions,
  startExecution,
  startRunner,
  waitForExecution,
  type RunnerDeps,
} from "./run";
export { handleCellBatch, startClusterRunner } from "./cluster-run";
export { executionEventFeed, type EventFeed, type FeedSink, type FeedMessage } from "./event-feed";
export { estimateRun } from "./estimate";
