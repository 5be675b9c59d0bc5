/**
 * A generation's conversations in source order (issue 51, names lost): they are written as they finish,
 * each numbered after the last, so the grid, the exports and the gate listed them in the order the target
 * happened to answer. Once the generation ends they are renumbered: by their source conversation's
 * position, each source's repeats in turn. Conversations of the dataset that no generation wrote keep
 * their order, after those. Runs inside the caller's transaction.
 */
import "server-only";
import { raw, rawExec, type Step } from "../store";

type Row = { id: number; position: number; meta: unknown };

const metaOf = (value: unknown): Record<string, unknown> => {
  if (typeof value === "string") {
    try {
      const parsed = JSON.parse(value) as unknown;
      return parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
};

export function* orderBySource(datasetId: number, sourceDatasetId: number): Generator<Step, number, unknown> {
  const rows = yield* raw<Row>("select id, position, meta from conversations where dataset_id = ? order by position", [datasetId]);
  const sources = yield* raw<{ id: number; position: number }>("select id, position from conversations where dataset_id = ?", [sourceDatasetId]);
  const sourcePosition = new Map(sources.map((s) => [Number(s.id), Number(s.position)]));
  const keyed = rows.map((r, i) => {
    const meta = metaOf(r.meta);
    const source = typeof meta.source_conversation_id === "number" ? sourcePosition.get(meta.source_conversation_id) : undefined;
    const repeat = typeof meta.repeat === "number" ? meta.repeat : 0;
    return { id: Number(r.id), position: Number(r.position), source: source ?? Number.MAX_SAFE_INTEGER, repeat, i };
  });
  const ordered = [...keyed].sort((a, b) => a.source - b.source || a.repeat - b.repeat || a.i - b.i);
  if (ordered.every((r, i) => r.position === i)) return 0;
  // Two passes, so no two rows ever share a position (the index on dataset and position is unique).
  for (const [i, r] of ordered.entries()) yield* rawExec("update conversations set position = ? where id = ?", [-(i + 1), r.id]);
  for (const [i, r] of ordered.entries()) yield* rawExec("update conversations set position = ? where id = ?", [i, r.id]);
  return ordered.length;
}
