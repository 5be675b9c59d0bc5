/**
 * The tables the repositories query, from the store this process runs on (db/dialect): db/schema.ts
 * (SQLite) or db/schema.pg.ts (PostgreSQL). Both files define the same tables with the same row types
 * (db/schema-parity.test.ts), so the repositories are written once against the SQLite types and run on
 * either.
 */
import { dialect } from "./dialect";

export const {
  datasetsTable,
  datasetCountsTable,
  conversationsTable,
  messagesTable,
  stepsTable,
  metricTemplatesTable,
  evaluationPipelinesTable,
  pipelineNodesTable,
  pipelineExecutionsTable,
  evaluationResultsTable,
  latestResultsTable,
  latestResultCountsTable,
  judgeCacheTable,
  labelsTable,
  metricPromptVersionsTable,
  importIdempotencyKeysTable,
  savedMappingsTable,
  otelConversationsTable,
  otelTracesTable,
  otelSpansTable,
  usersTable,
  apiKeysTable,
  sessionsTable,
  onlineRulesTable,
  onlineRuleConversationsTable,
  onlineRuleRunsTable,
} = dialect.tables;
