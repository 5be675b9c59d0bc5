/**
 * lib/metrics: templates, metrics, the template-variable catalogue and judge-prompt building.
 * The judge and the runner call `buildJudgePrompt` with a metric row, a tree from
 * `loadConversationTree` (load once per conversation) and the entity to judge.
 */
import "server-only";

export {
  buildJudgePrompt,
  buildPairwisePrompt,
  repliesText,
  fenceData,
  judgeSystemMessage,
  locateEntity,
  resolveVariables,
  type ConversationTree,
  type EntityRef,
  type JudgeMessage,
  type JudgeMetric,
  type JudgePrompt,
  type JudgeStep,
} from "./resolve";
export {
  createMetric,
  deleteMetric,
  getMetric,
  getMetricRow,
  listMetrics,
  loadConversationTree,
  loadConversationTrees,
  locateEntityOrThrow,
  previewJudgePrompt,
  toMetric,
  updateMetric,
} from "./metrics";
export { createTemplate, deleteTemplate, getTemplate, listTemplates, updateTemplate } from "./templates";
export { checkPromptVariables, extractVariables, variableCatalogue, variablesForLevel } from "./variables";
