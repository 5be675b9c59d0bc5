/** lib/judge: everything between a resolved prompt and a stored verdict. */
export { contextTokensFor, costOf, getJudgeConfig, notConfiguredMessage, resolveModelName, type JudgeConfig } from "./config";
export { ensureGoal, type Goal, type GoalInput, type GoalUsage } from "./goal";
export { judge, judgeCacheKey, judgeLanguageModel, type CallGate, type JudgeDeps, type JudgeOutcome, type JudgeRequest } from "./judge";
export { limiterFor } from "./limiter";
export { checkVerdict, verdictSchema } from "./verdicts";
export { judgeSettings, testJudgeConnection, type ConnectionTest, type JudgeSettings } from "./connection";
