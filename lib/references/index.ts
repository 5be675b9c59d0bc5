/**
 * What the reference editor reads: the scalar fields a dataset's meta holds (to pick a path from), and
 * how a reference reads a metric's cells (pass/fail counts before saving it). The readings are the ones
 * agreement uses (lib/labels/readings.ts).
 */
import "server-only";
import { currentLabelRows } from "@/db/repositories/labels";
import { sampleMetaObjects } from "@/db/repositories/meta-fields";
import { metaReadingRows } from "@/db/repositories/readings";
import { assertDatasetExists } from "@/lib/datasets";
import { metaValue, readingOfLabelValue, readingOfMeta } from "@/lib/labels/readings";
import { assertReference } from "@/lib/metrics/reference";
import { getMetricRow } from "@/lib/metrics/metrics";
import type { MetricReference } from "@/lib/schemas/labels";
import type { MetaField, MetaFields, ReferencePreview } from "@/lib/schemas/references";

/** How many conversations and messages the field list reads. */
export const META_SAMPLE = 1000;
const MAX_DEPTH = 8;
const MAX_EXAMPLES = 5;
const KEY = /^[A-Za-z0-9_-]{1,100}$/;

type Acc = Map<string, { types: Set<MetaField["types"][number]>; count: number; examples: Array<string | number | boolean> }>;

/** Scalar leaves of one meta object, as `meta.a.b` paths a reference can name (arrays are not walked). */
function collect(value: unknown, path: string, depth: number, acc: Acc, seen: Set<string>): void {
  if (value === null || value === undefined || Array.isArray(value)) return;
  if (typeof value === "object") {
    if (depth >= MAX_DEPTH) return;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (KEY.test(k)) collect(v, `${path}.${k}`, depth + 1, acc, seen);
    return;
  }
  const type = typeof value === "number" ? "number" : typeof value === "boolean" ? "boolean" : typeof value === "string" ? "string" : null;
  if (!type || seen.has(path)) return;
  seen.add(path);
  const field = acc.get(path) ?? { types: new Set(), count: 0, examples: [] };
  field.types.add(type);
  field.count += 1;
  const example = typeof value === "string" && value.length > 80 ? `${value.slice(0, 79)}…` : (value as string | number | boolean);
  if (field.examples.length < MAX_EXAMPLES && !field.examples.includes(example)) field.examples.push(example);
  acc.set(path, field);
}

function fieldsOf(objects: unknown[]): MetaField[] {
  const acc: Acc = new Map();
  for (const o of objects) collect(o, "meta", 0, acc, new Set());
  return [...acc.entries()]
    .map(([path, f]) => ({ path, types: [...f.types].sort(), count: f.count, examples: f.examples }))
    .sort((a, b) => b.count - a.count || a.path.localeCompare(b.path));
}

/** The scalar fields of the first META_SAMPLE conversations' and messages' meta of a dataset. */
export async function listMetaFields(datasetId: number): Promise<MetaFields> {
  await assertDatasetExists(datasetId);
  const sample = await sampleMetaObjects(datasetId, META_SAMPLE);
  return {
    sampled: { conversation: sample.conversation.length, message: sample.message.length },
    conversation: fieldsOf(sample.conversation),
    message: fieldsOf(sample.message),
  };
}

/**
 * How a reference (the one given, else the metric's saved one) reads each of the metric's cells, and
 * how many pass, fail or read otherwise. A reference the metric could not save is a 422, as on save.
 */
export async function previewReference(metricId: number, given: MetricReference | null | undefined): Promise<ReferencePreview> {
  const node = await getMetricRow(metricId);
  const reference = given === undefined ? ((node.reference ?? null) as MetricReference | null) : given;
  assertReference(reference, node);
  // Every entity of the metric's level with the field (for labels the whole meta object, never a reading).
  const meta = reference?.source === "meta" ? reference : null;
  const entities = await metaReadingRows(node.datasetId, node.evaluationLevel, meta?.level ?? "conversation", meta?.path ?? "meta");
  const byEntity = new Map<number, string | number | boolean>();
  if (meta) {
    for (const row of entities) {
      const reading = readingOfMeta(meta, node.outputType, metaValue(row.value, row.jsonType));
      if (reading !== undefined) byEntity.set(row.entityId, reading);
    }
  } else if (reference?.source === "labels") {
    // Newest first: a cell's first label seen is its most recent one.
    for (const l of await currentLabelRows(node.id, reference.user_id)) {
      if (byEntity.has(l.entityId) || l.entityType !== node.evaluationLevel) continue;
      const reading = readingOfLabelValue(node.outputType, l.value);
      if (reading !== undefined) byEntity.set(l.entityId, reading);
    }
  }
  const readings = entities
    .filter((e) => byEntity.has(e.entityId))
    .sort((a, b) => a.entityId - b.entityId)
    .map((e) => ({ entity_type: node.evaluationLevel, entity_id: e.entityId, value: byEntity.get(e.entityId)! }));
  const pass = readings.filter((r) => r.value === true).length;
  const fail = readings.filter((r) => r.value === false).length;
  return {
    reference,
    cells: entities.length,
    read: readings.length,
    missing: entities.length - readings.length,
    pass,
    fail,
    other: readings.length - pass - fail,
    readings,
  };
}
