/**
 * Expiring the trace store (issue 52): the spans of a live conversation whose newest span arrived before a
 * dataset's retention are deleted with its traces and its live record (otel_conversations; online rules'
 * claims of it go with it by cascade). The conversation built from them stays as it is. A conversation is
 * expired whole, in one transaction, and only once it is rebuilt, so no rebuild ever reads part of its spans.
 */
import "server-only";
import { dialect } from "../dialect";
import { placeholders } from "../placeholders";
import { bulkTransaction, raw, rawExec, rawRows } from "../store";

/** Datasets that hold live conversations, with their names (the retention setting is per dataset name). */
export async function datasetsWithSpans(): Promise<Array<{ id: number; name: string }>> {
  const rows = await rawRows<{ id: number; name: string }>(
    "select d.id, d.name from datasets d where exists (select 1 from otel_conversations o where o.dataset_id = d.id) order by d.id",
  );
  return rows.map((r) => ({ id: Number(r.id), name: r.name }));
}

/**
 * Up to `limit` of a dataset's live conversations whose newest span arrived before `before` (ISO time) and
 * that are rebuilt, oldest first, with their span counts; `after`: the last id of the previous batch.
 */
export async function expiredOtelConversations(datasetId: number, before: string, limit: number): Promise<Array<{ id: number; spans: number }>> {
  const rows = await rawRows<{ id: number; spans: number }>(
    `select id, span_count as spans from otel_conversations
     where dataset_id = ? and last_span_at < ? and assembled_revision >= revision order by last_span_at, id limit ?`,
    [datasetId, before, limit],
  );
  return rows.map((r) => ({ id: Number(r.id), spans: Number(r.spans) }));
}

/**
 * Delete these live conversations' spans, traces and records in one transaction (on SQLite on the write
 * thread, so the server's loop answers meanwhile), those still expired only: one that gained a span since it
 * was listed is kept. Returns how many conversations and spans went.
 */
export async function forgetOtelConversations(ids: number[], before: string): Promise<{ conversations: number; spans: number }> {
  if (ids.length === 0) return { conversations: 0, spans: 0 };
  return bulkTransaction(function* () {
    const still = (yield* raw<{ id: number }>(
      `select id from otel_conversations where id in (${placeholders(ids.length)}) and last_span_at < ? and assembled_revision >= revision${dialect.forUpdate}`,
      [...ids, before],
    )).map((r) => Number(r.id));
    if (still.length === 0) return { conversations: 0, spans: 0 };
    const list = placeholders(still.length);
    const spans = yield* rawExec(
      `delete from otel_spans where (dataset_id, trace_id) in (select dataset_id, trace_id from otel_traces where otel_conversation_id in (${list}))`,
      still,
    );
    // Its traces (and online rules' claims) go by cascade.
    const conversations = yield* rawExec(`delete from otel_conversations where id in (${list})`, still);
    return { conversations, spans };
  });
}
