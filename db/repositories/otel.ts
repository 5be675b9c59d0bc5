/**
 * OpenTelemetry spans and the conversations they are grouped into (lib/otel decides what a span
 * means; this file only stores). Spans are keyed by trace and span id, so an exporter's retry inserts
 * nothing. A trace belongs to one conversation per dataset (the first key one of its spans names, else
 * its own id); a conversation's `revision` rises with each export that brings it a new span, and its
 * messages are rebuilt from its spans (`saveAssembly`) until `assembled_revision` catches up.
 */
import "server-only";
import type { Conversation } from "@/lib/conversation";
import { dialect } from "../dialect";
import { exclusive, lockRow, raw, rawExec, rawRows, rawRun, transaction, type Step } from "../store";
import { writeConversations } from "./conversation-writes";

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

/** Lock key for creating a dataset by name (PostgreSQL): two exports naming a new dataset at once create it once. */
const DATASET_CREATE_LOCK = 7_305_771_025;

function* datasetIdFor(userId: string, name: string, now: string): Generator<Step, number, unknown> {
  const found = yield* raw<{ id: number }>("select id from datasets where user_id = ? and name = ? order by id limit 1", [userId, name]);
  if (found[0]) return found[0].id;
  yield* exclusive(DATASET_CREATE_LOCK);
  const again = yield* raw<{ id: number }>("select id from datasets where user_id = ? and name = ? order by id limit 1", [userId, name]);
  if (again[0]) return again[0].id;
  const created = yield* raw<{ id: number }>(
    "insert into datasets (name, description, user_id, created_at, updated_at) values (?, ?, ?, ?, ?) returning id",
    [name, "Conversations received as OpenTelemetry traces", userId, now, now],
  );
  return created[0].id;
}

/**
 * Store a batch of spans in one transaction: new spans inserted (known ones skipped), their traces
 * mapped to conversations (created on first use, datasets too), and every conversation that gained a
 * span marked for rebuilding. Returns the conversations to rebuild.
 */
export async function storeSpans(userId: string, spans: SpanToStore[]): Promise<IngestResult> {
  const now = new Date().toISOString();
  return transaction(function* () {
    const datasetIds = new Map<string, number>();
    for (const name of new Set(spans.map((s) => s.datasetName))) datasetIds.set(name, yield* datasetIdFor(userId, name, now));

    // Insert, learning which spans were new: RETURNING gives only the rows inserted.
    const inserted = new Set<string>();
    let at = 0;
    for (const size of CHUNKS) {
      while (spans.length - at >= size) {
        const chunk = spans.slice(at, at + size);
        at += size;
        const values = chunk.map(() => "(?, ?, ?, ?, ?, ?, ?)").join(", ");
        const params = chunk.flatMap((s) => [datasetIds.get(s.datasetName)!, s.traceId, s.spanId, s.name, s.startNs, JSON.stringify(s.data), now]);
        const rows = yield* raw<{ trace_id: string; span_id: string }>(
          `insert into otel_spans (dataset_id, trace_id, span_id, name, start_ns, data, received_at) values ${values} on conflict (trace_id, span_id) do nothing returning trace_id, span_id`,
          params,
        );
        for (const r of rows) inserted.add(`${r.trace_id}/${r.span_id}`);
      }
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

    const grown = new Map<number, number>(); // otel conversation id → spans gained
    const emptied = new Set<number>(); // conversations a trace moved away from
    let newSpans = 0;
    for (const t of traces.values()) {
      newSpans += t.count;
      const existing = (yield* raw<{ otel_conversation_id: number; keyed: number | boolean }>(
        "select otel_conversation_id, keyed from otel_traces where dataset_id = ? and trace_id = ?",
        [t.datasetId, t.traceId],
      ))[0];
      let target: number;
      if (existing && (Boolean(existing.keyed) || !t.key)) target = existing.otel_conversation_id;
      else {
        const key = t.key ?? t.traceId;
        target = (yield* raw<{ id: number }>(
          "insert into otel_conversations (dataset_id, key, first_span_at, last_span_at) values (?, ?, ?, ?) on conflict (dataset_id, key) do update set last_span_at = excluded.last_span_at returning id",
          [t.datasetId, key, now, now],
        ))[0].id;
        if (existing) {
          // The trace was grouped by its own id until a span named its conversation: it moves there.
          yield* rawExec("update otel_traces set otel_conversation_id = ?, keyed = ? where dataset_id = ? and trace_id = ?", [target, dialect.booleanParam(true), t.datasetId, t.traceId]);
          if (existing.otel_conversation_id !== target) emptied.add(existing.otel_conversation_id);
        } else {
          yield* rawExec("insert into otel_traces (dataset_id, trace_id, otel_conversation_id, keyed) values (?, ?, ?, ?)", [
            t.datasetId,
            t.traceId,
            target,
            dialect.booleanParam(Boolean(t.key)),
          ]);
        }
      }
      grown.set(target, (grown.get(target) ?? 0) + t.count);
    }
    for (const [id, count] of grown) {
      yield* rawExec("update otel_conversations set span_count = span_count + ?, revision = revision + 1, last_span_at = ? where id = ?", [count, now, id]);
    }
    for (const id of emptied) {
      if (grown.has(id)) continue;
      yield* rawExec(
        "update otel_conversations set span_count = (select count(*) from otel_spans s join otel_traces t on t.dataset_id = s.dataset_id and t.trace_id = s.trace_id where t.otel_conversation_id = ?), revision = revision + 1 where id = ?",
        [id, id],
      );
    }
    return { inserted: newSpans, duplicates: spans.length - newSpans, conversationIds: [...new Set([...grown.keys(), ...emptied])] };
  });
}

/** Conversations whose messages are behind their spans, oldest activity first. */
export async function staleConversationIds(limit: number): Promise<number[]> {
  const rows = await rawRows<{ id: number }>("select id from otel_conversations where assembled_revision < revision order by last_span_at limit ?", [limit]);
  return rows.map((r) => r.id);
}

/**
 * Set aside a conversation whose rebuild failed, until an export brings it new spans (its revision rises):
 * it keeps its last rebuilt messages, and the passes go on to the others instead of trying it first forever.
 */
export async function setAsideAssembly(id: number, revision?: number): Promise<void> {
  if (revision === undefined) await rawRun("update otel_conversations set assembled_revision = revision where id = ? and assembled_revision < revision", [id]);
  else await rawRun("update otel_conversations set assembled_revision = ? where id = ? and assembled_revision < ?", [revision, id, revision]);
}

export type ConversationSpans = { id: number; datasetId: number; key: string; revision: number; spans: unknown[] };

/** A conversation's revision, then every span of its traces (read in that order, so the revision never claims spans not read). */
export async function loadConversationSpans(id: number): Promise<ConversationSpans | undefined> {
  const head = (await rawRows<{ dataset_id: number; key: string; revision: number }>("select dataset_id, key, revision from otel_conversations where id = ?", [id]))[0];
  if (!head) return undefined;
  const rows = await rawRows<{ data: string | unknown }>(
    "select s.data from otel_traces t join otel_spans s on s.dataset_id = t.dataset_id and s.trace_id = t.trace_id where t.otel_conversation_id = ? order by s.start_ns, s.id",
    [id],
  );
  return {
    id,
    datasetId: head.dataset_id,
    key: head.key,
    revision: head.revision,
    spans: rows.map((r) => (typeof r.data === "string" ? (JSON.parse(r.data) as unknown) : r.data)),
  };
}

export type ConversationHead = { id: number; datasetId: number; key: string; revision: number; traces: Array<{ traceId: string; spans: number }> };

/**
 * A conversation's revision, then its traces with how many spans each holds (counted on the index, no
 * span read): enough to tell which traces gained spans since an assembly last read them.
 */
export async function conversationHead(id: number): Promise<ConversationHead | undefined> {
  const head = (await rawRows<{ dataset_id: number; key: string; revision: number }>("select dataset_id, key, revision from otel_conversations where id = ?", [id]))[0];
  if (!head) return undefined;
  const traces = await rawRows<{ trace_id: string; spans: number | string }>(
    "select t.trace_id, (select count(*) from otel_spans s where s.dataset_id = t.dataset_id and s.trace_id = t.trace_id) as spans from otel_traces t where t.otel_conversation_id = ?",
    [id],
  );
  return { id, datasetId: head.dataset_id, key: head.key, revision: head.revision, traces: traces.map((t) => ({ traceId: t.trace_id, spans: Number(t.spans) })) };
}

/** Every span of one trace of a dataset. */
export async function loadTraceSpans(datasetId: number, traceId: string): Promise<unknown[]> {
  const rows = await rawRows<{ data: string | unknown }>("select data from otel_spans where dataset_id = ? and trace_id = ? order by start_ns, id", [datasetId, traceId]);
  return rows.map((r) => (typeof r.data === "string" ? (JSON.parse(r.data) as unknown) : r.data));
}

/**
 * Write a rebuilt conversation in one transaction, unless a rebuild of the same or a later revision
 * got there first. Messages are compared by fingerprint: those before the first change keep their rows
 * (and the evaluations of them), the rest are replaced. A conversation left without spans is removed.
 */
export async function saveAssembly(id: number, revision: number, conversation: Conversation | null, hashes: string[]): Promise<SaveOutcome> {
  const now = new Date().toISOString();
  return transaction(() => saveOne({ id, revision, conversation, hashes }, now));
}

export type AssemblyToSave = { id: number; revision: number; conversation: Conversation | null; hashes: string[] };
export type SaveOutcome = "saved" | "unchanged" | "superseded" | "removed" | "set_aside";

/**
 * Several rebuilt conversations, each as `saveAssembly` writes it. On SQLite in one transaction: a
 * commit writes every page it touched to the log, and conversations rebuilt together share most of
 * theirs. On PostgreSQL one transaction each, so two processes never hold row locks of several
 * conversations at once (the ingest takes them in arrival order).
 */
export async function saveAssemblies(list: AssemblyToSave[]): Promise<SaveOutcome[]> {
  const now = new Date().toISOString();
  if (dialect.name !== "sqlite") {
    const outcomes: SaveOutcome[] = [];
    for (const item of list) outcomes.push(await transaction(() => saveOne(item, now)));
    return outcomes;
  }
  return transaction(function* () {
    const outcomes: SaveOutcome[] = [];
    for (const item of list) outcomes.push(yield* saveOne(item, now));
    return outcomes;
  });
}

function* saveOne({ id, revision, conversation, hashes }: AssemblyToSave, now: string): Generator<Step, SaveOutcome, unknown> {
  const head = (yield* raw<{ dataset_id: number; conversation_id: number | null; assembled_revision: number; message_hashes: string }>(
    `select dataset_id, conversation_id, assembled_revision, message_hashes from otel_conversations where id = ?${dialect.forUpdate}`,
    [id],
  ))[0];
  if (!head || head.assembled_revision >= revision) return "superseded" as const;
  const datasetId = head.dataset_id;
  let conversationId = head.conversation_id;
  if (conversationId !== null) {
    const alive = yield* raw<{ id: number }>("select id from conversations where id = ?", [conversationId]);
    if (!alive.length) conversationId = null;
  }
  if (!conversation) {
    if (conversationId !== null) yield* rawExec("delete from conversations where id = ?", [conversationId]);
    yield* rawExec("delete from otel_conversations where id = ? and not exists (select 1 from otel_traces where otel_conversation_id = ?)", [id, id]);
    yield* rawExec("update otel_conversations set conversation_id = null, message_hashes = ?, assembled_revision = ? where id = ?", ["[]", revision, id]);
    return "removed" as const;
  }
  const old: string[] = conversationId === null ? [] : (JSON.parse(typeof head.message_hashes === "string" ? head.message_hashes : JSON.stringify(head.message_hashes)) as string[]);
  // A new conversation is numbered under the dataset's row lock, so two writers number theirs one after the other.
  if (conversationId === null) yield* lockRow("datasets", datasetId);
  let same = 0;
  while (same < old.length && same < hashes.length && old[same] === hashes[same]) same++;
  const changed = same < old.length || same < hashes.length;
  // The one writer of conversations (conversation-writes.ts): the messages before the first change keep their rows.
  const rewrite = conversationId === null ? undefined : { id: conversationId, keepMessages: same, storedMessages: old.length };
  conversationId = (yield* writeConversations(datasetId, [{ conversation, rewrite }], now)).conversationIds[0];
  if (changed) yield* rawExec("update datasets set updated_at = ? where id = ?", [now, datasetId]);
  yield* rawExec("update otel_conversations set conversation_id = ?, message_hashes = ?, assembled_revision = ? where id = ?", [conversationId, JSON.stringify(hashes), revision, id]);
  return changed ? ("saved" as const) : ("unchanged" as const);
}

/** The stored conversation a span conversation became, with its revision state (tests, online rules). */
export async function otelConversationState(datasetId: number, key: string): Promise<
  { id: number; conversationId: number | null; revision: number; assembledRevision: number; spanCount: number; lastSpanAt: string } | undefined
> {
  const row = (
    await rawRows<{ id: number; conversation_id: number | null; revision: number; assembled_revision: number; span_count: number; last_span_at: string }>(
      "select id, conversation_id, revision, assembled_revision, span_count, last_span_at from otel_conversations where dataset_id = ? and key = ?",
      [datasetId, key],
    )
  )[0];
  return row && { id: row.id, conversationId: row.conversation_id, revision: row.revision, assembledRevision: row.assembled_revision, spanCount: row.span_count, lastSpanAt: row.last_span_at };
}
