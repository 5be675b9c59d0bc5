/**
 * Storing an export's spans, as statements only (no driver, no `server-only`): the body of the one
 * transaction `storeSpans` (db/repositories/otel.ts) runs on the server's store, and the one the input
 * pool's threads run on a SQLite connection of their own (db/sqlite-thread-store.ts), so an export's
 * spans are stored off the request loop. Spans are keyed by dataset, trace and span id, so an exporter's retry
 * inserts nothing. A trace belongs to one conversation per dataset (the first key one of its spans
 * names, else its own id); a conversation's `revision` rises with each export that brings it a new span.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { Step } from "../dialect/types";
import { placeholders } from "../placeholders";

export type SpanToStore = {
  datasetName: string;
  traceId: string;
  spanId: string;
  name: string;
  startNs: string;
  /** The conversation key the span names, if any. */
  key?: string;
  data: unknown;
};

export type IngestResult = { inserted: number; duplicates: number; conversationIds: number[] };

/** Rows per multi-row span insert; the rest go in smaller fixed sizes, so each store prepares few statement texts. */
const CHUNKS = [64, 8, 1];

/** What the body needs of the store's dialect (db/dialect): all pure. */
export type SpanStoreDialect = {
  /** SQLite may keep a span's JSON compressed (`storedSpanData`); PostgreSQL compresses large values itself. */
  name: "sqlite" | "postgres";
  booleanParam(value: boolean): unknown;
  /** The step that makes the transaction the only one of its kind (PostgreSQL's advisory lock), or null. */
  exclusive(key: number): Step | null;
};

function* raw<T>(text: string, params: readonly unknown[]): Generator<Step, T[], unknown> {
  return (yield { kind: "raw", text, params }) as T[];
}

function* rawExec(text: string, params: readonly unknown[]): Generator<Step, number, unknown> {
  return (yield { kind: "rawRun", text, params }) as number;
}

function* exclusive(sql: SpanStoreDialect, key: number): Generator<Step, void, unknown> {
  const step = sql.exclusive(key);
  if (step) yield step;
}

/** Lock key for creating a dataset by name (PostgreSQL): two exports naming a new dataset at once create it once. */
const DATASET_CREATE_LOCK = 7_305_771_025;
/**
 * Lock keys (plus the dataset's id) for mapping a dataset's traces to conversations (PostgreSQL): two exports
 * bringing spans of one new trace at once would both find it unknown and both insert it.
 */
const TRACE_MAPPING_LOCK = 7_306_000_000_000;

function* datasetIdFor(sql: SpanStoreDialect, userId: string, name: string, now: string): Generator<Step, number, unknown> {
  const found = yield* raw<{ id: number }>("select id from datasets where user_id = ? and name = ? order by id limit 1", [userId, name]);
  if (found[0]) return found[0].id;
  yield* exclusive(sql, DATASET_CREATE_LOCK);
  const again = yield* raw<{ id: number }>("select id from datasets where user_id = ? and name = ? order by id limit 1", [userId, name]);
  if (again[0]) return again[0].id;
  const created = yield* raw<{ id: number }>(
    "insert into datasets (name, description, user_id, created_at, updated_at) values (?, ?, ?, ?, ?) returning id",
    [name, "Conversations received as OpenTelemetry traces", userId, now, now],
  );
  return created[0].id;
}

/**
 * The statements that store a batch of spans, to run in one transaction: new spans inserted (known ones
 * skipped), their traces mapped to conversations (created on first use, datasets too), and every
 * conversation that gained a span marked for rebuilding. Returns the conversations to rebuild.
 */
export function* storeSpansSteps(
  sql: SpanStoreDialect,
  userId: string,
  spans: SpanToStore[],
  now: string,
  opts: { compress: boolean } = { compress: false },
): Generator<Step, IngestResult, unknown> {
  const datasetIds = new Map<string, number>();
  for (const name of new Set(spans.map((s) => s.datasetName))) datasetIds.set(name, yield* datasetIdFor(sql, userId, name, now));

  // Insert, learning which spans were new: RETURNING gives only the rows inserted.
  const inserted = new Set<string>();
  for (const chunk of chunked(spans)) {
    const values = chunk.map(() => "(?, ?, ?, ?, ?, ?, ?)").join(", ");
    const params = chunk.flatMap((s) => [datasetIds.get(s.datasetName)!, s.traceId, s.spanId, s.name, s.startNs, storedSpanData(sql, s, opts.compress), now]);
    const rows = yield* raw<{ trace_id: string; span_id: string }>(
      `insert into otel_spans (dataset_id, trace_id, span_id, name, start_ns, data, received_at) values ${values} on conflict (dataset_id, trace_id, span_id) do nothing returning trace_id, span_id`,
      params,
    );
    for (const r of rows) inserted.add(`${r.trace_id}/${r.span_id}`);
  }

  // The traces that gained spans, per dataset, with the first conversation key their new spans name.
  const traces = new Map<string, { datasetId: number; traceId: string; key?: string; count: number }>();
  for (const s of spans) {
    if (!inserted.has(`${s.traceId}/${s.spanId}`)) continue;
    inserted.delete(`${s.traceId}/${s.spanId}`); // a span twice in one batch counts once
    const datasetId = datasetIds.get(s.datasetName)!;
    const id = `${datasetId}/${s.traceId}`;
    const t = traces.get(id) ?? { datasetId, traceId: s.traceId, count: 0 };
    t.key ??= s.key;
    t.count++;
    traces.set(id, t);
  }

  // One export at a time maps a dataset's traces (its spans are in: a retry of them waits on nothing held here),
  // datasets in id order. Then which of those traces are known, and to which conversation (by key).
  for (const datasetId of [...new Set([...traces.values()].map((t) => t.datasetId))].sort((a, b) => a - b)) yield* exclusive(sql, TRACE_MAPPING_LOCK + datasetId);
  const known = new Map<string, { conversationId: number; key: string; keyed: boolean }>();
  const byDataset = new Map<number, string[]>();
  for (const t of traces.values()) {
    const list = byDataset.get(t.datasetId);
    if (list) list.push(t.traceId);
    else byDataset.set(t.datasetId, [t.traceId]);
  }
  for (const [datasetId, traceIds] of byDataset) {
    for (const chunk of chunked(traceIds)) {
      const rows = yield* raw<{ trace_id: string; otel_conversation_id: number; keyed: number | boolean; key: string }>(
        `select t.trace_id, t.otel_conversation_id, t.keyed, c.key from otel_traces t join otel_conversations c on c.id = t.otel_conversation_id where t.dataset_id = ? and t.trace_id in (${placeholders(chunk.length)})`,
        [datasetId, ...chunk],
      );
      for (const r of rows) known.set(`${datasetId}/${r.trace_id}`, { conversationId: r.otel_conversation_id, key: r.key, keyed: Boolean(r.keyed) });
    }
  }

  // Each trace's conversation: the one it is in, unless it was grouped by its own id and a new span names its
  // key (it moves there). Every conversation that gains spans is created or counted up by one upsert, in
  // (dataset, key) order so two exports lock the rows they share in the same order.
  const targets = new Map<string, { datasetId: number; key: string; count: number }>();
  const placed: Array<{ datasetId: number; traceId: string; target: string; keyed: boolean; from?: number }> = [];
  let newSpans = 0;
  for (const t of traces.values()) {
    newSpans += t.count;
    const existing = known.get(`${t.datasetId}/${t.traceId}`);
    const stays = existing && (existing.keyed || !t.key);
    const key = stays ? existing.key : (t.key ?? t.traceId);
    const target = `${t.datasetId}/${key}`;
    const entry = targets.get(target) ?? { datasetId: t.datasetId, key, count: 0 };
    entry.count += t.count;
    targets.set(target, entry);
    if (!stays) placed.push({ datasetId: t.datasetId, traceId: t.traceId, target, keyed: Boolean(t.key), from: existing?.conversationId });
  }
  const ids = new Map<string, number>();
  const ordered = [...targets.values()].sort((a, b) => a.datasetId - b.datasetId || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const chunk of chunked(ordered)) {
    const rows = yield* raw<{ id: number; dataset_id: number; key: string }>(
      `insert into otel_conversations (dataset_id, key, first_span_at, last_span_at, span_count, revision) values ${chunk.map(() => "(?, ?, ?, ?, ?, 1)").join(", ")} on conflict (dataset_id, key) do update set span_count = otel_conversations.span_count + excluded.span_count, revision = otel_conversations.revision + 1, last_span_at = excluded.last_span_at returning id, dataset_id, key`,
      chunk.flatMap((c) => [c.datasetId, c.key, now, now, c.count]),
    );
    for (const r of rows) ids.set(`${r.dataset_id}/${r.key}`, r.id);
  }

  const emptied = new Set<number>(); // conversations a trace moved away from
  const joined = new Set<number>(); // conversations a trace moved to, with the spans it already had
  const fresh: Array<{ datasetId: number; traceId: string; target: number; keyed: boolean }> = [];
  for (const p of placed) {
    const target = ids.get(p.target)!;
    if (p.from === undefined) fresh.push({ datasetId: p.datasetId, traceId: p.traceId, target, keyed: p.keyed });
    else {
      // The trace was grouped by its own id until a span named its conversation: it moves there.
      yield* rawExec("update otel_traces set otel_conversation_id = ?, keyed = ? where dataset_id = ? and trace_id = ?", [target, sql.booleanParam(true), p.datasetId, p.traceId]);
      if (p.from !== target) {
        emptied.add(p.from);
        joined.add(target);
      }
    }
  }
  for (const chunk of chunked(fresh)) {
    yield* rawExec(
      `insert into otel_traces (dataset_id, trace_id, otel_conversation_id, keyed) values ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}`,
      chunk.flatMap((f) => [f.datasetId, f.traceId, f.target, sql.booleanParam(f.keyed)]),
    );
  }
  // Where traces moved, the spans are counted again: both sides' counts change by more than this export's spans.
  const grown = new Set(ids.values());
  for (const id of new Set([...joined, ...emptied])) {
    yield* rawExec(
      `update otel_conversations set span_count = (select count(*) from otel_spans s join otel_traces t on t.dataset_id = s.dataset_id and t.trace_id = s.trace_id where t.otel_conversation_id = ?)${grown.has(id) ? "" : ", revision = revision + 1"} where id = ?`,
      [id, id],
    );
  }
  return { inserted: newSpans, duplicates: spans.length - newSpans, conversationIds: [...new Set([...grown, ...emptied])] };
}

/** A list in slices of CHUNKS' sizes (64 while that many are left, then 8, then 1). */
export function* chunked<T>(list: readonly T[]): Generator<T[]> {
  let at = 0;
  for (const size of CHUNKS) {
    while (list.length - at >= size) {
      yield list.slice(at, at + size);
      at += size;
    }
  }
}

/** The span fields its row's columns hold: kept there, not again in `data`. */
const COLUMN_FIELDS = [
  ["traceId", "trace_id"],
  ["spanId", "span_id"],
  ["name", "name"],
  ["startNs", "start_ns"],
] as const;
/** JSON shorter than this is kept as text on SQLite: compressing it saves too little. */
const COMPRESS_FROM_BYTES = 256;

/**
 * A span's `data` as stored: its JSON without the fields its columns hold (when they hold them whole: a
 * name is cut to 1,000 characters there), on SQLite with OTEL_SPAN_COMPRESSION=on compressed (raw deflate,
 * fastest level: about 2.5x smaller for the bench's GenAI spans, ~25 us a span on the thread that stores it).
 */
export function storedSpanData(sql: Pick<SpanStoreDialect, "name">, span: SpanToStore, compress: boolean): string | Buffer {
  let data = span.data;
  if (data && typeof data === "object" && !Array.isArray(data)) {
    const rest = { ...(data as Record<string, unknown>) };
    for (const [field] of COLUMN_FIELDS) if (rest[field] === span[field]) delete rest[field];
    data = rest;
  }
  const json = JSON.stringify(data);
  return compress && sql.name === "sqlite" && json.length >= COMPRESS_FROM_BYTES ? deflateRawSync(json, { level: 1 }) : json;
}

/** A stored span's row, as the readers select it. */
export type StoredSpanRow = { trace_id: string; span_id: string; name: string; start_ns: string; data: unknown };

/**
 * The span a row holds, whichever way it was kept: compressed (SQLite with OTEL_SPAN_COMPRESSION=on), JSON
 * text (SQLite otherwise; rows stored before issue 52 hold every field) or parsed already (PostgreSQL's json);
 * the fields left to the columns put back first.
 */
export function spanFromRow(row: StoredSpanRow): unknown {
  const { data } = row;
  const span = data instanceof Uint8Array ? JSON.parse(inflateRawSync(data).toString("utf8")) : typeof data === "string" ? JSON.parse(data) : data;
  if (!span || typeof span !== "object" || Array.isArray(span)) return span;
  const columns: Record<string, string> = {};
  for (const [field, column] of COLUMN_FIELDS) columns[field] = row[column];
  return { ...columns, ...(span as Record<string, unknown>) };
}
