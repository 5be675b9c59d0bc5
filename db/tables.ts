/**
 * The tables the repositories query, from the store this process runs on: db/schema.ts (SQLite) or
 * db/schema.pg.ts (PostgreSQL, when DATABASE_URL is set). Both files define the same tables with the
 * same row types (db/schema-parity.test.ts), so the repositories are written once against the SQLite
 * types and run on either. The store is fixed for the life of a process.
 */
import * as sqlite from "./schema";
import * as pg from "./schema.pg";

/** Whether this process runs on PostgreSQL: DATABASE_URL set (lib/config.ts validates its scheme). */
export const onPostgres = Boolean(process.env.DATABASE_URL?.trim());

type Tables = Pick<
  typeof sqlite,
  | "datasetsTable"
  | "conversationsTable"
  | "messagesTable"
  | "stepsTable"
  | "metricTemplatesTable"
  | "evaluationPipelinesTable"
  | "pipelineNodesTable"
  | "pipelineExecutionsTable"
  | "evaluationResultsTable"
  | "judgeCacheTable"
  | "labelsTable"
  | "metricPromptVersionsTable"
  | "importIdempotencyKeysTable"
  | "savedMappingsTable"
  | "otelConversationsTable"
  | "otelTracesTable"
  | "otelSpansTable"
  | "usersTable"
  | "apiKeysTable"
  | "sessionsTable"
  | "onlineRulesTable"
  | "onlineRuleConversationsTable"
  | "onlineRuleRunsTable"
>;

// The PostgreSQL tables carry the SQLite tables' static types: the query builder calls the
// repositories make exist on both dialects with the same meaning, and the row types are identical.
const tables: Tables = onPostgres ? (pg as unknown as Tables) : sqlite;

export const {
  datasetsTable,
  conversationsTable,
  messagesTable,
  stepsTable,
  metricTemplatesTable,
  evaluationPipelinesTable,
  pipelineNodesTable,
  pipelineExecutionsTable,
  evaluationResultsTable,
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
} = tables;
