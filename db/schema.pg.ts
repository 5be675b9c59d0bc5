/**
 * The PostgreSQL mirror of db/schema.ts: the same tables, columns, indexes, checks, foreign keys and
 * exports, and the same row types, so code typed against one store works with the other
 * (db/schema-parity.test.ts holds both to that). Change the two files together.
 *
 * How the SQLite types map: ids are `integer` identities (int4 stays a JS number, as SQLite's
 * integers are); JSON columns are `json`, not `jsonb`, because jsonb reorders keys and drops
 * duplicates and we keep exactly what the user gave; booleans are `boolean`; `real` is
 * `double precision` (SQLite's REAL is an 8-byte float); timestamps stay ISO 8601 UTC text, so they
 * sort and go on the wire exactly as SQLite's do.
 */
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  json,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  type AnyPgColumn,
} from "drizzle-orm/pg-core";
import {
  evaluationLevels,
  executionStatuses,
  messageRoles,
  metricKinds,
  outputTypes,
  resultStatuses,
  type CheckSpec,
  type SkipRule,
  type StepKind,
} from "../lib/vocabulary";

// The vocabulary, re-exported as db/schema.ts does.
export {
  evaluationLevels,
  executionStatuses,
  messageRoles,
  metricKinds,
  outputTypes,
  resultStatuses,
  stepKinds,
  type CheckSpec,
  type EvaluationLevel,
  type ExecutionStatus,
  type MessageRole,
  type MetricKind,
  type OutputType,
  type ResultStatus,
  type SkipRule,
  type StepKind,
} from "../lib/vocabulary";

/**
 * The text SQLite's `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')` gives, e.g. 2026-11-23T12:30:05.123Z.
 * statement_timestamp(), not now(): SQLite's 'now' is fixed within one statement but moves between
 * the statements of a transaction, and now() would stamp a whole transaction with its start time.
 */
const nowIso = sql`to_char(statement_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const createdAt = () => text("created_at").notNull().default(nowIso);
const updatedAt = () => text("updated_at").notNull().default(nowIso);

export const datasetsTable = pgTable(
  "datasets",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    name: text("name").notNull(),
    description: text("description"),
    userId: text("user_id").notNull().default("default"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("datasets_user_created_idx").on(t.userId, t.createdAt)],
);

/**
 * Row counts of each dataset, kept by triggers on datasets, conversations, messages and steps (migrations
 * 0016 on SQLite, 0012 on PostgreSQL): the datasets list and the grid's totals read them instead of
 * counting a large dataset's rows on every read.
 */
export const datasetCountsTable = pgTable("dataset_counts", {
  datasetId: integer("dataset_id")
    .primaryKey()
    // Optional on insert, as SQLite types an integer primary key; rows are only ever made by the datasets trigger.
    .$defaultFn(() => {
      throw new Error("dataset_counts rows are made by the trigger on datasets");
    })
    .references(() => datasetsTable.id, { onDelete: "cascade" }),
  conversations: integer("conversations").notNull().default(0),
  messages: integer("messages").notNull().default(0),
  /** The grid's message level lists assistant messages only. */
  assistantMessages: integer("assistant_messages").notNull().default(0),
  steps: integer("steps").notNull().default(0),
});

export const conversationsTable = pgTable(
  "conversations",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    name: text("name"),
    description: text("description"),
    meta: json("meta"),
    agents: json("agents"),
    /** The user's goal, extracted once by the judge model and reused by every metric (@GOAL). */
    goal: text("goal"),
    goalGeneratedBy: text("goal_generated_by"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("conversations_dataset_position_idx").on(t.datasetId, t.position)],
);

export const messagesTable = pgTable(
  "messages",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => conversationsTable.id, { onDelete: "cascade" }),
    /** Denormalised so dataset counts and grid pages need no join through conversations. */
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    role: text("role", { enum: messageRoles }).notNull(),
    content: text("content"),
    meta: json("meta"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("messages_conversation_position_idx").on(t.conversationId, t.position),
    index("messages_dataset_role_idx").on(t.datasetId, t.role),
  ],
);

export const stepsTable = pgTable(
  "steps",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    messageId: integer("message_id")
      .notNull()
      .references(() => messagesTable.id, { onDelete: "cascade" }),
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => conversationsTable.id, { onDelete: "cascade" }),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    thinking: text("thinking"),
    toolCall: json("tool_call"),
    toolResult: json("tool_result"),
    outputContent: text("output_content"),
    outputStructured: json("output_structured"),
    modelName: text("model_name"),
    agentName: text("agent_name"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("steps_message_position_idx").on(t.messageId, t.position),
    index("steps_conversation_idx").on(t.conversationId),
    index("steps_dataset_idx").on(t.datasetId),
  ],
);

export const metricTemplatesTable = pgTable(
  "metric_templates",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    /** Stable key of a system template, so seeding updates it in place instead of duplicating it. */
    systemKey: text("system_key"),
    name: text("name").notNull(),
    description: text("description"),
    evaluationLevel: text("evaluation_level", { enum: evaluationLevels }).notNull(),
    prompt: text("prompt").notNull(),
    outputType: text("output_type", { enum: outputTypes }).notNull(),
    outputSchema: json("output_schema"),
    modelName: text("model_name"),
    isAdvanced: boolean("is_advanced").notNull().default(false),
    templateVariables: json("template_variables").$type<string[]>().notNull().default(sql`'[]'::json`),
    category: text("category"),
    kind: text("kind", { enum: metricKinds }).notNull().default("llm"),
    check: json("check").$type<CheckSpec>(),
    /** Step level: the step kinds the metric judges; null judges every step. */
    appliesTo: json("applies_to").$type<StepKind[]>(),
    isSystem: boolean("is_system").notNull().default(false),
    userId: text("user_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("metric_templates_system_key_idx").on(t.systemKey),
    index("metric_templates_user_idx").on(t.userId, t.evaluationLevel),
    index("metric_templates_system_level_idx").on(t.isSystem, t.evaluationLevel),
  ],
);

export const evaluationPipelinesTable = pgTable(
  "evaluation_pipelines",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("evaluation_pipelines_dataset_idx").on(t.datasetId)],
);

export const pipelineNodesTable = pgTable(
  "pipeline_nodes",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    evaluationPipelineId: integer("evaluation_pipeline_id")
      .notNull()
      .references(() => evaluationPipelinesTable.id, { onDelete: "cascade" }),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    /** Where the metric was copied from; the copy stays valid when the template is edited or deleted. */
    templateId: integer("template_id").references(() => metricTemplatesTable.id, { onDelete: "set null" }),
    name: text("name").notNull(),
    description: text("description"),
    evaluationLevel: text("evaluation_level", { enum: evaluationLevels }).notNull(),
    prompt: text("prompt").notNull(),
    outputType: text("output_type", { enum: outputTypes }).notNull(),
    outputSchema: json("output_schema"),
    modelName: text("model_name"),
    isAdvanced: boolean("is_advanced").notNull().default(false),
    templateVariables: json("template_variables").$type<string[]>().notNull().default(sql`'[]'::json`),
    /** Where the truth for this metric comes from (a meta field with a rule, or the human labels); see lib/labels/reference. */
    reference: json("reference"),
    position: integer("position").notNull(),
    kind: text("kind", { enum: metricKinds }).notNull().default("llm"),
    check: json("check").$type<CheckSpec>(),
    /** Step level: the step kinds the metric judges; null judges every step. */
    appliesTo: json("applies_to").$type<StepKind[]>(),
    /** Metric ids of the same dataset evaluated before this one (their verdicts feed @METRIC.<name>). */
    dependsOn: json("depends_on").$type<number[]>().notNull().default(sql`'[]'::json`),
    skipRule: json("skip_rule").$type<SkipRule>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("pipeline_nodes_dataset_position_idx").on(t.datasetId, t.position),
    index("pipeline_nodes_pipeline_idx").on(t.evaluationPipelineId),
    index("pipeline_nodes_template_idx").on(t.templateId),
  ],
);

export const pipelineExecutionsTable = pgTable(
  "pipeline_executions",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    evaluationPipelineId: integer("evaluation_pipeline_id").references(() => evaluationPipelinesTable.id, {
      onDelete: "cascade",
    }),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    /** Null for row and "all" scopes; set null if the metric is deleted so history survives. */
    pipelineNodeId: integer("pipeline_node_id").references(() => pipelineNodesTable.id, { onDelete: "set null" }),
    status: text("status", { enum: executionStatuses }).notNull().default("pending"),
    startedAt: text("started_at"),
    completedAt: text("completed_at"),
    durationMs: integer("duration_ms"),
    totalEvaluations: integer("total_evaluations").notNull().default(0),
    successfulEvaluations: integer("successful_evaluations").notNull().default(0),
    failedEvaluations: integer("failed_evaluations").notNull().default(0),
    /** Cells of the run not evaluated: not applicable, dependency not met, or never run (interrupted, cancelled). */
    skippedEvaluations: integer("skipped_evaluations").notNull().default(0),
    errors: json("errors").notNull().default(sql`'[]'::json`),
    meta: json("meta").notNull().default(sql`'{}'::json`),
    createdAt: createdAt(),
  },
  (t) => [
    index("pipeline_executions_dataset_started_idx").on(t.datasetId, t.startedAt),
    index("pipeline_executions_status_idx").on(t.status),
    index("pipeline_executions_node_idx").on(t.pipelineNodeId),
  ],
);

export const evaluationResultsTable = pgTable(
  "evaluation_results",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    executionId: integer("execution_id")
      .notNull()
      .references(() => pipelineExecutionsTable.id, { onDelete: "cascade" }),
    pipelineNodeId: integer("pipeline_node_id")
      .notNull()
      .references(() => pipelineNodesTable.id, { onDelete: "cascade" }),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    entityType: text("entity_type", { enum: evaluationLevels }).notNull(),
    entityId: integer("entity_id").notNull(),
    conversationId: integer("conversation_id")
      .notNull()
      .references((): AnyPgColumn => conversationsTable.id, { onDelete: "cascade" }),
    messageId: integer("message_id").references(() => messagesTable.id, { onDelete: "cascade" }),
    stepId: integer("step_id").references(() => stepsTable.id, { onDelete: "cascade" }),
    result: json("result"),
    /** The numeric score used by aggregates (progress score, checkbox 1/0, number value, json score). */
    score: doublePrecision("score"),
    status: text("status", { enum: resultStatuses }).notNull(),
    error: text("error"),
    /** The judge's raw reply when it could not be parsed, kept so a user can see what went wrong. */
    rawOutput: text("raw_output"),
    executionTime: integer("execution_time").notNull().default(0),
    modelName: text("model_name"),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    cached: boolean("cached").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    index("evaluation_results_execution_idx").on(t.executionId, t.id),
    index("evaluation_results_latest_idx").on(t.pipelineNodeId, t.entityType, t.entityId, t.id),
    index("evaluation_results_dataset_idx").on(t.datasetId),
    index("evaluation_results_conversation_idx").on(t.conversationId),
    // Deleting a message or step (a live conversation rebuilt from its spans) looks up its results by these.
    index("evaluation_results_message_idx").on(t.messageId),
    index("evaluation_results_step_idx").on(t.stepId),
    check("evaluation_results_status_check", sql`${t.status} in ('completed', 'failed', 'skipped')`),
  ],
);

/**
 * The latest result of each (metric, entity), kept by triggers on evaluation_results in the transaction
 * that writes or deletes a result (migrations SQLite 0017 / PostgreSQL 0013): the grid's verdict filters
 * and metric sorts read it by index instead of finding each row's latest result. `position` is the
 * conversation's grid position for conversation-level rows (kept when conversations are renumbered),
 * null for the other levels; `score` is the result's score when it completed, else null.
 * Partial indexes made by the migration, not declared here: (pipeline_node_id, entity_type, score,
 * position) and (…, score desc, position) where score is not null — pass/fail in grid order and metric
 * sorts — and (pipeline_node_id, entity_type, position) where status = 'failed'.
 */
export const latestResultsTable = pgTable(
  "latest_results",
  {
    entityId: integer("entity_id").notNull(),
    entityType: text("entity_type", { enum: evaluationLevels }).notNull(),
    pipelineNodeId: integer("pipeline_node_id").notNull(),
    position: integer("position"),
    resultId: integer("result_id").notNull(),
    status: text("status", { enum: resultStatuses }).notNull(),
    score: doublePrecision("score"),
  },
  (t) => [primaryKey({ columns: [t.entityId, t.entityType, t.pipelineNodeId] })],
);

/** Per (metric, level): how many entities have a latest result, and how many of those pass, fail, failed (kept by triggers on latest_results). */
export const latestResultCountsTable = pgTable(
  "latest_result_counts",
  {
    pipelineNodeId: integer("pipeline_node_id").notNull(),
    entityType: text("entity_type", { enum: evaluationLevels }).notNull(),
    results: integer("results").notNull().default(0),
    /** Completed with score 1 (a checkbox's pass). */
    passes: integer("passes").notNull().default(0),
    /** Completed with score 0 (a checkbox's fail). */
    fails: integer("fails").notNull().default(0),
    /** Status failed (the judge or check could not decide). */
    failures: integer("failures").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.pipelineNodeId, t.entityType] })],
);

export const judgeCacheTable = pgTable(
  "judge_cache",
  {
    /** sha256 of everything that decides the answer: model, messages, output schema, settings. */
    key: text("key").primaryKey(),
    model: text("model").notNull(),
    response: json("response").notNull(),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    hits: integer("hits").notNull().default(0),
    createdAt: createdAt(),
    lastUsedAt: text("last_used_at").notNull().default(nowIso),
  },
  (t) => [index("judge_cache_last_used_idx").on(t.lastUsedAt)],
);

/**
 * Human labels of cells. A relabel by the same user inserts a new row and stamps the previous one
 * `superseded_at`, so the current label of a (metric, entity, user) is the one without it and the
 * history stays readable.
 */
export const labelsTable = pgTable(
  "labels",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    pipelineNodeId: integer("pipeline_node_id")
      .notNull()
      .references(() => pipelineNodesTable.id, { onDelete: "cascade" }),
    entityType: text("entity_type", { enum: evaluationLevels }).notNull(),
    entityId: integer("entity_id").notNull(),
    conversationId: integer("conversation_id")
      .notNull()
      .references(() => conversationsTable.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    /** The label as the metric's result would hold it: a boolean, a score, a string or an object. */
    value: json("value"),
    /** The same numeric reading as a result's score (checkbox 1/0, progress score, number value). */
    score: doublePrecision("score"),
    note: text("note"),
    supersededAt: text("superseded_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("labels_cell_user_idx").on(t.pipelineNodeId, t.entityType, t.entityId, t.userId, t.id),
    index("labels_dataset_idx").on(t.datasetId, t.pipelineNodeId),
  ],
);

/** Every saved version of a metric's judge definition, so two runs can say what changed between them. */
export const metricPromptVersionsTable = pgTable(
  "metric_prompt_versions",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    pipelineNodeId: integer("pipeline_node_id")
      .notNull()
      .references(() => pipelineNodesTable.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    prompt: text("prompt").notNull(),
    evaluationLevel: text("evaluation_level", { enum: evaluationLevels }).notNull(),
    outputType: text("output_type", { enum: outputTypes }).notNull(),
    outputSchema: json("output_schema"),
    modelName: text("model_name"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("metric_prompt_versions_node_version_idx").on(t.pipelineNodeId, t.version)],
);

export type DatasetRow = typeof datasetsTable.$inferSelect;
export type ConversationRow = typeof conversationsTable.$inferSelect;
export type MessageRow = typeof messagesTable.$inferSelect;
export type StepRow = typeof stepsTable.$inferSelect;
export type MetricTemplateRow = typeof metricTemplatesTable.$inferSelect;
export type EvaluationPipelineRow = typeof evaluationPipelinesTable.$inferSelect;
export type PipelineNodeRow = typeof pipelineNodesTable.$inferSelect;
export type PipelineExecutionRow = typeof pipelineExecutionsTable.$inferSelect;
export type EvaluationResultRow = typeof evaluationResultsTable.$inferSelect;
export type JudgeCacheRow = typeof judgeCacheTable.$inferSelect;
export type LabelRow = typeof labelsTable.$inferSelect;
export type MetricPromptVersionRow = typeof metricPromptVersionsTable.$inferSelect;

/**
 * The first outcome of an import sent with an `Idempotency-Key` header, so a client that lost the
 * response and retries gets that outcome again instead of a second dataset. Written in the import's
 * own transaction when it succeeds. `fingerprint` is the sha256 of the file and form fields: the same
 * key with another request is refused.
 */
export const importIdempotencyKeysTable = pgTable(
  "import_idempotency_keys",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: text("user_id").notNull(),
    /** Which endpoint (and dataset) the key was used on. */
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    status: integer("status").notNull(),
    body: json("body").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("import_idempotency_keys_key_idx").on(t.userId, t.scope, t.key), index("import_idempotency_keys_created_idx").on(t.createdAt)],
);

/**
 * Import mappings a user saved by name, to read the next file of the same shape with the same
 * mapping (the `mapping_id` form field of the import endpoints). `mapping` is an ImportMapping,
 * checked by its zod schema before it is stored. A name is unique per user: saving it again replaces.
 */
export const savedMappingsTable = pgTable(
  "saved_mappings",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: text("user_id").notNull(),
    name: text("name").notNull(),
    mapping: json("mapping").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("saved_mappings_user_name_idx").on(t.userId, t.name)],
);

export type SavedMappingRow = typeof savedMappingsTable.$inferSelect;

export const otelConversationsTable = pgTable(
  "otel_conversations",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    conversationId: integer("conversation_id").references(() => conversationsTable.id, { onDelete: "set null" }),
    spanCount: integer("span_count").notNull().default(0),
    revision: integer("revision").notNull().default(0),
    assembledRevision: integer("assembled_revision").notNull().default(0),
    messageHashes: json("message_hashes").$type<string[]>().notNull().default(sql`'[]'`),
    firstSpanAt: text("first_span_at").notNull(),
    lastSpanAt: text("last_span_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("otel_conversations_dataset_key_idx").on(t.datasetId, t.key),
    index("otel_conversations_last_span_idx").on(t.lastSpanAt),
    // Only the conversations still to rebuild: finding them costs what is behind, not what is stored.
    index("otel_conversations_stale_idx").on(t.lastSpanAt).where(sql`assembled_revision < revision`),
    index("otel_conversations_conversation_idx").on(t.conversationId),
  ],
);

export const otelTracesTable = pgTable(
  "otel_traces",
  {
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    traceId: text("trace_id").notNull(),
    otelConversationId: integer("otel_conversation_id")
      .notNull()
      .references(() => otelConversationsTable.id, { onDelete: "cascade" }),
    keyed: boolean("keyed").notNull().default(false),
  },
  (t) => [
    uniqueIndex("otel_traces_dataset_trace_idx").on(t.datasetId, t.traceId),
    index("otel_traces_conversation_idx").on(t.otelConversationId),
  ],
);

export const otelSpansTable = pgTable(
  "otel_spans",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    traceId: text("trace_id").notNull(),
    spanId: text("span_id").notNull(),
    name: text("name").notNull(),
    startNs: text("start_ns").notNull(),
    data: json("data").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (t) => [
    // One index keys a span and serves every read by trace: a second random-keyed index doubled the pages an export dirties.
    uniqueIndex("otel_spans_dataset_trace_span_idx").on(t.datasetId, t.traceId, t.spanId),
  ],
);

export type OtelConversationRow = typeof otelConversationsTable.$inferSelect;
export type OtelTraceRow = typeof otelTracesTable.$inferSelect;
export type OtelSpanRow = typeof otelSpansTable.$inferSelect;

export const usersTable = pgTable(
  "users",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    name: text("name").notNull(),
    role: text("role").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("users_name_idx").on(t.name)],
);

export type UserRow = typeof usersTable.$inferSelect;

export const apiKeysTable = pgTable(
  "api_keys",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: integer("user_id")
      .notNull()
      .references(() => usersTable.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull(),
    createdAt: createdAt(),
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.keyHash), index("api_keys_user_idx").on(t.userId), index("api_keys_active_idx").on(t.revokedAt)],
);

export type ApiKeyRow = typeof apiKeysTable.$inferSelect;

export const sessionsTable = pgTable(
  "sessions",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    idHash: text("id_hash").notNull(),
    userName: text("user_name").notNull(),
    role: text("role").notNull(),
    keyId: integer("key_id"),
    /** SHA-256 of API_TOKEN for a session signed in with it: a new token ends those sessions. */
    tokenHash: text("token_hash"),
    createdAt: createdAt(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("sessions_id_hash_idx").on(t.idHash), index("sessions_expires_idx").on(t.expiresAt)],
);

export type SessionRow = typeof sessionsTable.$inferSelect;

export const onlineRulesTable = pgTable(
  "online_rules",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull(),
    pipelineNodeIds: json("pipeline_node_ids").$type<number[]>().notNull(),
    filter: text("filter"),
    sampleRate: doublePrecision("sample_rate").notNull(),
    idleSeconds: integer("idle_seconds").notNull(),
    maxCostUsdPerDay: doublePrecision("max_cost_usd_per_day"),
    enabled: boolean("enabled").notNull().default(true),
    evaluated: integer("evaluated").notNull().default(0),
    lastError: text("last_error"),
    lastErrorAt: text("last_error_at"),
    sweptUntil: text("swept_until"),
    sweepLeaseUntil: text("sweep_lease_until"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("online_rules_dataset_idx").on(t.datasetId)],
);

/**
 * Which revision of each live conversation a rule has taken: one row per (rule, conversation), claimed
 * by one statement that succeeds only while `revision` is below the conversation's, so a revision is
 * taken exactly once across processes and a conversation that grows is taken again.
 */
export const onlineRuleConversationsTable = pgTable(
  "online_rule_conversations",
  {
    ruleId: integer("rule_id")
      .notNull()
      .references(() => onlineRulesTable.id, { onDelete: "cascade" }),
    otelConversationId: integer("otel_conversation_id")
      .notNull()
      .references(() => otelConversationsTable.id, { onDelete: "cascade" }),
    revision: integer("revision").notNull(),
    sampled: boolean("sampled").notNull().default(false),
    executionId: integer("execution_id"),
    claimedAt: text("claimed_at").notNull(),
    /** When the sweep that claimed it decided (sampled or not, run started); null: claimed, not decided yet. */
    decidedAt: text("decided_at"),
  },
  (t) => [uniqueIndex("online_rule_conversations_rule_conv_idx").on(t.ruleId, t.otelConversationId), index("online_rule_conversations_claimed_idx").on(t.ruleId, t.claimedAt)],
);

/** The executions a rule started (its spend of the day is read from their results). */
export const onlineRuleRunsTable = pgTable(
  "online_rule_runs",
  {
    ruleId: integer("rule_id")
      .notNull()
      .references(() => onlineRulesTable.id, { onDelete: "cascade" }),
    executionId: integer("execution_id").notNull(),
    conversations: integer("conversations").notNull(),
    startedAt: text("started_at").notNull(),
  },
  (t) => [uniqueIndex("online_rule_runs_execution_idx").on(t.executionId), index("online_rule_runs_rule_idx").on(t.ruleId, t.startedAt)],
);

export type OnlineRuleRow = typeof onlineRulesTable.$inferSelect;

/** An agent or model to test (issue 37): a generation sends conversations to it. Header values may name `${env:NAME}`. */
export const targetsTable = pgTable(
  "targets",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: text("user_id").notNull(),
    name: text("name").notNull(),
    kind: text("kind").notNull(),
    url: text("url").notNull(),
    model: text("model"),
    headers: json("headers").$type<Record<string, string>>(),
    requestTemplate: text("request_template"),
    replyPath: text("reply_path"),
    stepsPath: text("steps_path"),
    maxConcurrency: integer("max_concurrency").notNull().default(16),
    timeoutMs: integer("timeout_ms").notNull().default(60000),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("targets_user_idx").on(t.userId)],
);

/** A replay or simulation: conversations of a source dataset sent to a target, each result a conversation of `dataset_id`. */
export const generationsTable = pgTable(
  "generations",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: text("user_id").notNull(),
    sourceDatasetId: integer("source_dataset_id").references(() => datasetsTable.id, { onDelete: "set null" }),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    targetId: integer("target_id").references(() => targetsTable.id, { onDelete: "set null" }),
    mode: text("mode").notNull(),
    status: text("status").notNull(),
    params: json("params").notNull(),
    total: integer("total").notNull().default(0),
    completed: integer("completed").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    usage: json("usage"),
    stopReasons: json("stop_reasons"),
    error: text("error"),
    createdAt: createdAt(),
    startedAt: text("started_at"),
    finishedAt: text("finished_at"),
    /** The source conversations chosen at creation (conversation_ids and filter resolved): a process that resumes it works these. */
    sourceConversationIds: json("source_conversation_ids").$type<number[]>(),
    /** The process working it now, and until when its claim holds unless renewed (the queue, lib/generation/queue.ts). */
    claimedBy: text("claimed_by"),
    leaseUntil: text("lease_until"),
    /** Claims so far: a generation whose workers keep dying is failed after a few, not claimed for ever. */
    attempts: integer("attempts").notNull().default(0),
  },
  (t) => [index("generations_dataset_idx").on(t.datasetId), index("generations_source_idx").on(t.sourceDatasetId), index("generations_status_idx").on(t.status)],
);

/** A judge alignment (issue 39): candidates of a metric's prompt scored on held-out labels; `report` holds the figures. */
export const alignmentsTable = pgTable(
  "alignments",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: text("user_id").notNull(),
    datasetId: integer("dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    pipelineNodeId: integer("pipeline_node_id")
      .notNull()
      .references(() => pipelineNodesTable.id, { onDelete: "cascade" }),
    status: text("status").notNull(),
    params: json("params").notNull(),
    report: json("report"),
    usage: json("usage"),
    total: integer("total").notNull().default(0),
    done: integer("done").notNull().default(0),
    error: text("error"),
    createdAt: createdAt(),
    finishedAt: text("finished_at"),
    /** Until when the process working it holds it (renewed while it works): past it, a sweep ends it failed. */
    leaseUntil: text("lease_until"),
  },
  (t) => [index("alignments_node_idx").on(t.pipelineNodeId)],
);

/** A pairwise comparison (issue 38.5): two sides' replies judged against each other, in both orders, by one pairwise metric. */
export const comparisonsTable = pgTable(
  "comparisons",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    userId: text("user_id").notNull(),
    pipelineNodeId: integer("pipeline_node_id")
      .notNull()
      .references(() => pipelineNodesTable.id, { onDelete: "cascade" }),
    aSource: text("a_source").notNull(),
    bSource: text("b_source"),
    aDatasetId: integer("a_dataset_id")
      .notNull()
      .references(() => datasetsTable.id, { onDelete: "cascade" }),
    bDatasetId: integer("b_dataset_id").references(() => datasetsTable.id, { onDelete: "cascade" }),
    pairBy: text("pair_by").notNull(),
    status: text("status").notNull(),
    params: json("params").notNull(),
    total: integer("total").notNull().default(0),
    usage: json("usage"),
    error: text("error"),
    createdAt: createdAt(),
    startedAt: text("started_at"),
    finishedAt: text("finished_at"),
    /** Until when the process working it holds it (renewed while it works): past it, a sweep ends it failed. */
    leaseUntil: text("lease_until"),
  },
  (t) => [index("comparisons_node_idx").on(t.pipelineNodeId)],
);

/** One pair of a comparison: a's reply and b's reply to the same input, with the verdict in each order. */
export const comparisonPairsTable = pgTable(
  "comparison_pairs",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    comparisonId: integer("comparison_id")
      .notNull()
      .references(() => comparisonsTable.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    groupKey: text("group_key"),
    aConversationId: integer("a_conversation_id")
      .notNull()
      .references(() => conversationsTable.id, { onDelete: "cascade" }),
    aMessageId: integer("a_message_id"),
    bConversationId: integer("b_conversation_id")
      .notNull()
      .references(() => conversationsTable.id, { onDelete: "cascade" }),
    bMessageId: integer("b_message_id"),
    verdictAb: text("verdict_ab"),
    verdictBa: text("verdict_ba"),
    reasoningAb: text("reasoning_ab"),
    reasoningBa: text("reasoning_ba"),
    outcome: text("outcome"),
    error: text("error"),
  },
  (t) => [uniqueIndex("comparison_pairs_position_idx").on(t.comparisonId, t.position)],
);
