/**
 * The dataset grid's state as flat rows: one row per cell (a metric × an entity of its level, in grid
 * order), holding that cell's latest verdict across executions — or nothing yet — and the columns of
 * every source of the export. Read a page of entities at a time, so a large dataset is never held whole.
 */
import "server-only";
import { latestResultsFor } from "@/db/repositories/evaluation-results";
import * as gridRepo from "@/db/repositories/grid";
import { currentLabelRows } from "@/db/repositories/labels";
import { listNodes } from "@/db/repositories/metrics";
import { metaReadingRows } from "@/db/repositories/readings";
import type { EvaluationResultRow, LabelRow, PipelineNodeRow } from "@/db/schema";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { assertDatasetExists } from "@/lib/datasets";
import { metaValue, readingOfLabelValue, readingOfMeta } from "@/lib/labels/readings";
import type { MetricReference } from "@/lib/schemas/labels";
import { isRecord, verdictValue } from "./export-rows";
import { metricAppliesToStep } from "@/lib/metrics/step-kinds";
import { entityPage, type GridEntity } from "./grid";
import { VERDICT_COLUMNS } from "./grid-columns";

/** A cell's value: JSON values as they are (the JSON export keeps them); CSV and XLSX write objects as JSON text. */
export type GridValue = string | number | boolean | null | object;
export type GridRecord = Record<string, GridValue>;

/** One cell of the grid, with what every source needs to fill its columns. */
export type GridCell = {
  entity: GridEntity;
  metric: PipelineNodeRow;
  /** The latest result of (metric, entity) across executions; undefined when it was never evaluated. */
  result: EvaluationResultRow | undefined;
  conversation: gridRepo.ConversationInfoRow | undefined;
};

/**
 * A group of export columns. The verdict and the conversation's meta are sources; labels and a metric's
 * reference join as two more (`gridExportSources`) without touching the writers. `columns` is fixed before
 * the first row (a CSV header needs it); `values` gets a page of cells at once, so a source that reads the
 * database does it in one query per page, and returns one record per cell, in order.
 */
export type GridExportSource = {
  columns: string[];
  values(cells: GridCell[]): GridRecord[] | Promise<GridRecord[]>;
};

const LEVELS: EvaluationLevel[] = ["conversation", "message", "step"];
const ENTITY_PAGE = 500;


/** Where the row is and what its latest verdict says (status null: not evaluated yet). */
const verdictSource: GridExportSource = {
  columns: [...VERDICT_COLUMNS],
  values: (cells) =>
    cells.map(({ entity, metric, result, conversation }) => {
      const verdict = result?.result ?? null;
      const record: Record<(typeof VERDICT_COLUMNS)[number], GridValue> = {
        entity_type: entity.entity_type,
        entity_id: entity.entity_id,
        conversation_id: entity.conversation_id,
        conversation_name: conversation?.name?.trim() ? conversation.name : `Conversation ${(conversation?.position ?? 0) + 1}`,
        message_id: entity.message_id,
        step_id: entity.step_id,
        position: entity.position,
        label: entity.label,
        role: entity.role,
        metric_id: metric.id,
        metric_name: metric.name,
        output_type: metric.outputType,
        status: result?.status ?? null,
        score: result?.score ?? null,
        value: verdictValue(verdict, metric.outputType),
        reasoning: isRecord(verdict) && typeof verdict.reasoning === "string" ? verdict.reasoning : null,
        result: verdict,
        error: result?.error ?? null,
        execution_id: result?.executionId ?? null,
        model_name: result?.modelName ?? null,
        updated_at: result?.createdAt ?? null,
      };
      return record;
    }),
};

/** `meta.<key>` per top-level key of the dataset's conversation meta; absent keys are null. */
async function conversationMetaSource(datasetId: number): Promise<GridExportSource> {
  const keys = await gridRepo.listConversationMetaKeys(datasetId);
  return {
    columns: keys.map((k) => `meta.${k}`),
    values: (cells) =>
      cells.map(({ conversation }) => {
        const meta = isRecord(conversation?.meta) ? conversation.meta : {};
        return Object.fromEntries(keys.map((k) => [`meta.${k}`, (Object.hasOwn(meta, k) ? (meta[k] as GridValue) : null) ?? null]));
      }),
  };
}

/** Loads once per metric on first use: a plan reads each metric's labels or reference in one query. */
function perMetric<T>(load: (metric: PipelineNodeRow) => T): (metric: PipelineNodeRow) => T {
  const loaded = new Map<number, T>();
  return (metric) => {
    if (!loaded.has(metric.id)) loaded.set(metric.id, load(metric));
    return loaded.get(metric.id)!;
  };
}

const cellKey = (type: string, id: number) => `${type}:${id}`;

/** The newest current human label of each cell (any user), with its note, author and time. */
function labelSource(): GridExportSource {
  const labelsOf = perMetric(async (metric) => {
    const byCell = new Map<string, LabelRow>();
    // Newest first: the first label seen for a cell is its latest.
    for (const l of await currentLabelRows(metric.id)) if (!byCell.has(cellKey(l.entityType, l.entityId))) byCell.set(cellKey(l.entityType, l.entityId), l);
    return byCell;
  });
  return {
    columns: ["label_value", "label_note", "label_user", "labelled_at"],
    values: async (cells) => {
      const out: GridRecord[] = [];
      for (const { entity, metric } of cells) {
        const l = (await labelsOf(metric)).get(cellKey(entity.entity_type, entity.entity_id));
        out.push({ label_value: (l?.value as GridValue) ?? null, label_note: l?.note ?? null, label_user: l?.userId ?? null, labelled_at: l?.createdAt ?? null });
      }
      return out;
    },
  };
}

/**
 * What the metric's reference says for the cell: a meta field read through its rule (pass/fail), or
 * the reference user's latest label. `reference` names where it comes from.
 */
function referenceSource(datasetId: number): GridExportSource {
  const readingsOf = perMetric(async (metric): Promise<{ from: string; byEntity: Map<number, GridValue> } | null> => {
    const reference = metric.reference as MetricReference | null;
    if (!reference) return null;
    const byEntity = new Map<number, GridValue>();
    if (reference.source === "meta") {
      for (const row of await metaReadingRows(datasetId, metric.evaluationLevel, reference.level, reference.path)) {
        const reading = readingOfMeta(reference, metric.outputType, metaValue(row.value, row.jsonType));
        if (reading !== undefined) byEntity.set(row.entityId, reading);
      }
      const rule = reference.rule ? ` ${reference.rule.op} ${JSON.stringify(reference.rule.value)}` : "";
      return { from: `${reference.level}.${reference.path}${rule}`, byEntity };
    }
    for (const l of await currentLabelRows(metric.id, reference.user_id)) {
      const reading = readingOfLabelValue(metric.outputType, l.value);
      if (reading !== undefined && !byEntity.has(l.entityId)) byEntity.set(l.entityId, reading);
    }
    return { from: reference.user_id ? `labels:${reference.user_id}` : "labels", byEntity };
  });
  return {
    columns: ["reference", "reference_value"],
    values: async (cells) => {
      const out: GridRecord[] = [];
      for (const { entity, metric } of cells) {
        const r = await readingsOf(metric);
        out.push({ reference: r?.from ?? null, reference_value: r?.byEntity.get(entity.entity_id) ?? null });
      }
      return out;
    },
  };
}

/** The export's sources in column order: the verdict, the conversation's meta, labels, the reference. */
export async function gridExportSources(datasetId: number): Promise<GridExportSource[]> {
  return [verdictSource, await conversationMetaSource(datasetId), labelSource(), referenceSource(datasetId)];
}

export type GridExportPlan = {
  datasetId: number;
  metrics: PipelineNodeRow[];
  sources: GridExportSource[];
  columns: string[];
};

/** The dataset's metrics and the export's columns (404 AppError for an unknown dataset). */
export async function planGridExport(datasetId: number): Promise<GridExportPlan> {
  await assertDatasetExists(datasetId);
  const sources = await gridExportSources(datasetId);
  return { datasetId, metrics: await listNodes({ datasetId }), sources, columns: sources.flatMap((s) => s.columns) };
}

/** The cells of one page of entities: every metric of the level, in column order, per entity. */
async function cellsOf(entities: GridEntity[], metrics: PipelineNodeRow[], level: EvaluationLevel): Promise<GridCell[]> {
  const latest = await latestResultsFor(
    metrics.map((m) => m.id),
    level,
    entities.map((e) => e.entity_id),
  );
  const byCell = new Map(latest.map((r) => [`${r.pipelineNodeId}:${r.entityId}`, r]));
  const conversations = new Map((await gridRepo.listConversationInfo([...new Set(entities.map((e) => e.conversation_id))])).map((c) => [c.id, c]));
  return entities.flatMap((entity) =>
    metrics
      // A step of a kind the metric does not judge is no cell (the grid shows n/a): no row for it (issue 51:
      // a blank row for every such step).
      .filter((metric) => entity.entity_type !== "step" || metricAppliesToStep(metric.appliesTo, entity.step_kinds ?? []))
      .map((metric) => ({
        entity,
        metric,
        result: byCell.get(`${metric.id}:${entity.entity_id}`),
        conversation: conversations.get(entity.conversation_id),
      })),
  );
}

/** Pages of export records, level by level in grid order; each page is a few queries whatever its size. */
export async function* gridRecordPages(plan: GridExportPlan): AsyncGenerator<GridRecord[]> {
  for (const level of LEVELS) {
    const metrics = plan.metrics.filter((m) => m.evaluationLevel === level);
    if (metrics.length === 0) continue;
    for (let offset = 0; ; offset += ENTITY_PAGE) {
      const { entities } = await entityPage(plan.datasetId, { level, limit: ENTITY_PAGE, offset });
      if (entities.length === 0) break;
      const cells = await cellsOf(entities, metrics, level);
      const parts = await Promise.all(plan.sources.map((s) => s.values(cells)));
      yield cells.map((_, i) => Object.assign({}, ...parts.map((p) => p[i])) as GridRecord);
      if (entities.length < ENTITY_PAGE) break;
    }
  }
}
