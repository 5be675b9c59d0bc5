/** lib/online: online rules judge live conversations as they finish (sweep.ts), within a daily budget. */
export { createRule, deleteRule, getRule, listRules, spentToday, updateRule } from "./rules";
export { sampledFor, startOnlineSweep, stopOnlineSweep, sweepOnlineRules, type RuleSweep } from "./sweep";
export { liveDataset } from "./live";
