/**
 * OpenTelemetry spans and the conversations they are grouped into (lib/otel decides what a span
 * means; this file only stores). Spans are keyed by dataset, trace and span id, so an exporter's retry inserts
 * nothing. A trace belongs to one conversation per dataset (the first key one of its spans names, else
 * its own id); a conversation's `revision` rises with each export that brings it a new span, and its
 * messages are rebuilt from its spans (`saveAssembly`) until `assembled_revision` catches up.
 */
import "server-only";
import type { Conversation } from "@/lib/conversation";
import { dialect } from "../dialect";
import { databaseFile } from "../sqlite-database";
import type { ThreadStore } from "../sqlite-thread-store";
import { writeGate } from "../sqlite-write-gate";
import { lockRow, placeholders, raw, rawExec, rawRows, rawRun, transaction, type Step } from "../store";
import { writeConversations } from "./conversation-writes";
import { chunked, spanFromRow, storeSpansSteps, type IngestResult, type SpanToStore, type StoredSpanRow } from "./otel-span-store";

export type { IngestResult, SpanToStore } from "./otel-span-store";

/**
 * Store a batch of spans in one transaction (`storeSpansSteps`): new spans inserted (known ones skipped),
 * their traces mapped to conversations (created on first use, datasets too), and every conversation that
 * gained a span marked for rebuilding. Returns the conversations to rebuild.
 */
export async function storeSpans(userId: string, spans: SpanToStore[], opts: { compress: boolean } = { compress: false }): Promise<IngestResult> {
  const now = new Date().toISOString();
  return transaction(() => storeSpansSteps(dialect, userId, spans, now, opts));
}

/**
 * Where an input-pool thread may store an export's spans itself (lib/otel/store-export.ts): the SQLite
 * file, opened and migrated here first, and the write gate the server's writes wait on. Null on
 * PostgreSQL (a server of its own already: its writes never hold the event loop) and for `:memory:`.
 */
export async function spanStoreForThreads(): Promise<ThreadStore | null> {
  if (dialect.name !== "sqlite") return null;
  // Opened and migrated (synchronously): not through `database()`, which waits while a thread stores spans.
  const file = databaseFile();
  return file ? { file, gate: writeGate() } : null;
}

/** Conversations whose messages are behind their spans, oldest activity first, with how many spans each holds. */
export async function staleConversations(limit: number): Promise<Array<{ id: number; spans: number }>> {
  const rows = await rawRows<{ id: number; span_count: number | string }>(
    "select id, span_count from otel_conversations where assembled_revision < revision order by last_span_at limit ?",
    [limit],
  );
  return rows.map((r) => ({ id: Number(r.id), spans: Number(r.span_count) }));
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
  return (await loadConversationsSpans([id])).get(id);
}

/**
 * Several conversations as `loadConversationSpans` reads one (every revision before any span), with a
 * statement per slice of ids instead of two per conversation: on PostgreSQL a rebuild pass of new
 * conversations was their round trips. A conversation that is gone is not in the map.
 */
export async function loadConversationsSpans(ids: readonly number[]): Promise<Map<number, ConversationSpans>> {
  const out = new Map<number, ConversationSpans>();
  for (const chunk of chunked(ids)) {
    const heads = await rawRows<{ id: number; dataset_id: number; key: string; revision: number }>(
      `select id, dataset_id, key, revision from otel_conversations where id in (${placeholders(chunk.length)})`,
      chunk,
    );
    for (const h of heads) out.set(Number(h.id), { id: Number(h.id), datasetId: h.dataset_id, key: h.key, revision: h.revision, spans: [] });
  }
  // The traces first, then their spans by (dataset, trace) from that index: one join of both let PostgreSQL's
  // planner, misled by a table's statistics while it grows, hash the whole span table for a page of traces.
  const traces = new Map<number, Map<string, number>>(); // dataset -> trace -> conversation
  for (const chunk of chunked([...out.keys()])) {
    const rows = await rawRows<{ otel_conversation_id: number; dataset_id: number; trace_id: string }>(
      `select otel_conversation_id, dataset_id, trace_id from otel_traces where otel_conversation_id in (${placeholders(chunk.length)})`,
      chunk,
    );
    for (const r of rows) {
      const ofDataset = traces.get(Number(r.dataset_id)) ?? new Map<string, number>();
      ofDataset.set(r.trace_id, Number(r.otel_conversation_id));
      traces.set(Number(r.dataset_id), ofDataset);
    }
  }
  const read = new Map<number, Array<{ startNs: string; id: number; data: unknown }>>();
  for (const [datasetId, ofDataset] of traces) {
    for (const chunk of chunked([...ofDataset.keys()])) {
      const rows = await rawRows<StoredSpanRow & { id: number }>(
        `select id, trace_id, span_id, name, start_ns, data from otel_spans where dataset_id = ? and trace_id in (${placeholders(chunk.length)})`,
        [datasetId, ...chunk],
      );
      for (const r of rows) {
        const conversation = ofDataset.get(r.trace_id)!;
        const list = read.get(conversation) ?? [];
        list.push({ startNs: r.start_ns, id: Number(r.id), data: spanFromRow(r) });
        read.set(conversation, list);
      }
    }
  }
  // In start order, then as stored (the order `loadTraceSpans` reads; start_ns is text, compared as SQL compares it).
  for (const [conversation, list] of read) {
    list.sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : a.id - b.id));
    const spans = out.get(conversation)!.spans;
    for (const s of list) spans.push(s.data);
  }
  return out;
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
  const rows = await rawRows<StoredSpanRow>("select trace_id, span_id, name, start_ns, data from otel_spans where dataset_id = ? and trace_id = ? order by start_ns, id", [datasetId, traceId]);
  return rows.map(spanFromRow);
}

/**
 * Write a rebuilt conversation in one transaction, unless a rebuild of the same or a later revision
 * got there first. Messages are compared by fingerprint: those before the first change keep their rows
 * (and the evaluations of them), the rest are replaced. A conversation left without spans is removed.
 */
export async function saveAssembly(id: number, revision: number, conversation: Conversation | null, hashes: string[]): Promise<SaveOutcome> {
  return (await saveAssemblies([{ id, revision, conversation, hashes }]))[0];
}

export type AssemblyToSave = { id: number; revision: number; conversation: Conversation | null; hashes: string[] };
export type SaveOutcome = "saved" | "unchanged" | "superseded" | "removed" | "set_aside";

/**
 * Several rebuilt conversations, each as `saveAssembly` writes it, with one statement per table for all
 * of a dataset's (not a round of statements each: on PostgreSQL a round trip costs more than the rows).
 * On SQLite in one transaction. On PostgreSQL one transaction per dataset, which first takes the
 * dataset's row lock when a conversation will be numbered in it and only then the conversations' rows:
 * an export holds the dataset's key-share lock while it counts up those rows, so the other order could
 * wait on it in a circle.
 */
export async function saveAssemblies(list: AssemblyToSave[]): Promise<SaveOutcome[]> {
  const now = new Date().toISOString();
  if (dialect.name === "sqlite") return transaction(() => saveMany(list, now));
  const outcomes: SaveOutcome[] = new Array<SaveOutcome>(list.length).fill("superseded");
  const where = new Map<number, { datasetId: number; numbers: boolean }>();
  for (const chunk of chunked([...new Set(list.map((item) => item.id))])) {
    const rows = await rawRows<{ id: number; dataset_id: number; conversation_id: number | null }>(
      `select id, dataset_id, conversation_id from otel_conversations where id in (${placeholders(chunk.length)})`,
      chunk,
    );
    for (const r of rows) where.set(r.id, { datasetId: r.dataset_id, numbers: r.conversation_id === null });
  }
  const byDataset = new Map<number, { numbers: boolean; at: number[] }>();
  list.forEach((item, at) => {
    const w = where.get(item.id);
    if (!w) return; // gone: superseded
    const group = byDataset.get(w.datasetId) ?? { numbers: false, at: [] };
    group.numbers ||= w.numbers;
    group.at.push(at);
    byDataset.set(w.datasetId, group);
  });
  for (const [datasetId, group] of [...byDataset].sort((a, b) => a[0] - b[0])) {
    const saved = await transaction(function* () {
      if (group.numbers) yield* lockRow("datasets", datasetId);
      return yield* saveMany(group.at.map((at) => list[at]), now, group.numbers);
    });
    group.at.forEach((at, i) => (outcomes[at] = saved[i]));
  }
  return outcomes;
}

type Head = { id: number; dataset_id: number; conversation_id: number | null; assembled_revision: number; message_hashes: string | string[] };

/** Save `list` in the caller's transaction (`locked`: the caller holds the row lock of the only dataset involved). */
function* saveMany(list: AssemblyToSave[], now: string, locked = false): Generator<Step, SaveOutcome[], unknown> {
  const outcomes: SaveOutcome[] = new Array<SaveOutcome>(list.length).fill("superseded");
  // The conversations' rows, locked, passing over those an export is counting up (they will be rebuilt again
  // after it: taking them in another order than it could wait in a circle); then which stored conversations exist.
  const heads = new Map<number, Head>();
  for (const chunk of chunked([...new Set(list.map((item) => item.id))].sort((a, b) => a - b))) {
    const rows = yield* raw<Head>(
      `select id, dataset_id, conversation_id, assembled_revision, message_hashes from otel_conversations where id in (${placeholders(chunk.length)}) order by id${dialect.forUpdateSkipLocked}`,
      chunk,
    );
    for (const r of rows) heads.set(r.id, r);
  }
  const stored = [...heads.values()].flatMap((h) => (h.conversation_id === null ? [] : [h.conversation_id]));
  const alive = new Set<number>();
  for (const chunk of chunked(stored)) {
    for (const r of yield* raw<{ id: number }>(`select id from conversations where id in (${placeholders(chunk.length)})`, chunk)) alive.add(r.id);
  }

  type Write = { at: number; rewrite?: { id: number; keepMessages: number; storedMessages: number }; changed: boolean };
  const writes = new Map<number, Write[]>(); // per dataset
  const taken = new Set<number>();
  for (let at = 0; at < list.length; at++) {
    const { id, revision, conversation, hashes } = list[at];
    const head = heads.get(id);
    if (!head || head.assembled_revision >= revision || taken.has(id)) continue;
    taken.add(id);
    const conversationId = head.conversation_id !== null && alive.has(head.conversation_id) ? head.conversation_id : null;
    if (!conversation) {
      if (conversationId !== null) yield* rawExec("delete from conversations where id = ?", [conversationId]);
      yield* rawExec("delete from otel_conversations where id = ? and not exists (select 1 from otel_traces where otel_conversation_id = ?)", [id, id]);
      yield* rawExec("update otel_conversations set conversation_id = null, message_hashes = ?, assembled_revision = ? where id = ?", ["[]", revision, id]);
      outcomes[at] = "removed";
      continue;
    }
    const old: string[] = conversationId === null ? [] : typeof head.message_hashes === "string" ? (JSON.parse(head.message_hashes) as string[]) : head.message_hashes;
    let same = 0;
    while (same < old.length && same < hashes.length && old[same] === hashes[same]) same++;
    const changed = same < old.length || same < hashes.length;
    const rewrite = conversationId === null ? undefined : { id: conversationId, keepMessages: same, storedMessages: old.length };
    const pending = writes.get(head.dataset_id);
    if (pending) pending.push({ at, rewrite, changed });
    else writes.set(head.dataset_id, [{ at, rewrite, changed }]);
  }

  for (const [datasetId, group] of [...writes].sort((a, b) => a[0] - b[0])) {
    // New conversations are numbered under the dataset's row lock, so two writers number theirs one after the other.
    if (!locked && group.some((w) => !w.rewrite)) yield* lockRow("datasets", datasetId);
    // The one writer of conversations (conversation-writes.ts): the messages before the first change keep their rows.
    const written = yield* writeConversations(
      datasetId,
      group.map((w) => ({ conversation: list[w.at].conversation!, rewrite: w.rewrite })),
      now,
    );
    if (group.some((w) => w.changed)) yield* rawExec("update datasets set updated_at = ? where id = ?", [now, datasetId]);
    const assembled = group.map((w, i) => ({ id: list[w.at].id, conversationId: written.conversationIds[i], hashes: JSON.stringify(list[w.at].hashes), revision: list[w.at].revision }));
    for (const chunk of chunked(assembled)) yield* markAssembled(chunk);
    for (const { at, changed } of group) outcomes[at] = changed ? "saved" : "unchanged";
  }
  return outcomes;
}

/**
 * Record what the rows now hold (their conversation, message fingerprints and revision) with one statement for
 * the slice, not one each: on PostgreSQL a thousand new conversations were a thousand round trips here.
 */
function* markAssembled(rows: Array<{ id: number; conversationId: number; hashes: string; revision: number }>): Generator<Step, void, unknown> {
  const json = dialect.name === "postgres" ? "cast(? as json)" : "?";
  const cases = (value: string) => `case id ${rows.map(() => `when ? then ${value}`).join(" ")} end`;
  yield* rawExec(
    `update otel_conversations set conversation_id = ${cases("cast(? as integer)")}, message_hashes = ${cases(json)}, assembled_revision = ${cases("cast(? as integer)")} where id in (${placeholders(rows.length)})`,
    [
      ...rows.flatMap((r) => [r.id, r.conversationId]),
      ...rows.flatMap((r) => [r.id, r.hashes]),
      ...rows.flatMap((r) => [r.id, r.revision]),
      ...rows.map((r) => r.id),
    ],
  );
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
