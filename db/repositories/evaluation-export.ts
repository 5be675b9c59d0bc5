/**
 * Where a judged cell's conversation came from in the traces (lib/otel/export.ts): the trace and span of
 * the model call that wrote a message (its meta, written by OTLP assembly), for a step its message's, for
 * a conversation its last assistant message's (or only its first trace when no message carries one).
 */
import "server-only";
import type { EvaluationLevel } from "@/lib/vocabulary";
import { placeholders, rawRows } from "../store";

export type CellToTrace = { entityType: EvaluationLevel; entityId: number; conversationId: number; messageId: number | null; stepId: number | null };
export type TraceContext = { traceId: string; spanId?: string; traced: boolean };

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

const metaOf = (v: unknown): Record<string, unknown> => {
  const parsed = typeof v === "string" ? (JSON.parse(v) as unknown) : v;
  return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
};

/** A message's trace context from its meta, when OTLP assembly wrote one. */
function fromMessageMeta(meta: Record<string, unknown>): TraceContext | undefined {
  const traceId = typeof meta.trace_id === "string" ? meta.trace_id.toLowerCase() : "";
  const spanId = typeof meta.span_id === "string" ? meta.span_id.toLowerCase() : "";
  if (!HEX32.test(traceId)) return undefined;
  return { traceId, ...(HEX16.test(spanId) ? { spanId } : {}), traced: true };
}

/** Each cell's trace context, keyed `<entity_type>:<entity_id>`; cells of untraced conversations are absent. */
export async function traceContextsOf(cells: CellToTrace[]): Promise<Map<string, TraceContext>> {
  const out = new Map<string, TraceContext>();
  if (!cells.length) return out;
  const messageIds = [...new Set(cells.flatMap((c) => (c.messageId !== null ? [c.messageId] : [])))];
  const conversationIds = [...new Set(cells.filter((c) => c.entityType === "conversation").map((c) => c.conversationId))];
  const byMessage = new Map<number, TraceContext>();
  for (let i = 0; i < messageIds.length; i += 500) {
    const ids = messageIds.slice(i, i + 500);
    for (const row of await rawRows<{ id: number; meta: unknown }>(`select id, meta from messages where id in (${placeholders(ids.length)})`, ids)) {
      const found = fromMessageMeta(metaOf(row.meta));
      if (found) byMessage.set(Number(row.id), found);
    }
  }
  const byConversation = new Map<number, TraceContext>();
  for (let i = 0; i < conversationIds.length; i += 500) {
    const ids = conversationIds.slice(i, i + 500);
    // The last assistant message that carries a span: the call that ended the conversation.
    for (const row of await rawRows<{ conversation_id: number; meta: unknown }>(
      `select conversation_id, meta from messages where conversation_id in (${placeholders(ids.length)}) and role = 'assistant' and meta is not null order by conversation_id, position`,
      ids,
    )) {
      const found = fromMessageMeta(metaOf(row.meta));
      if (found?.spanId) byConversation.set(Number(row.conversation_id), found);
    }
    const missing = ids.filter((id) => !byConversation.has(id));
    if (missing.length) {
      for (const row of await rawRows<{ id: number; meta: unknown }>(`select id, meta from conversations where id in (${placeholders(missing.length)})`, missing)) {
        const meta = metaOf(row.meta);
        const first = Array.isArray(meta.trace_ids) && typeof meta.trace_ids[0] === "string" ? meta.trace_ids[0].toLowerCase() : "";
        if (meta.source === "opentelemetry" && HEX32.test(first)) byConversation.set(Number(row.id), { traceId: first, traced: true });
      }
    }
  }
  for (const c of cells) {
    const found = c.entityType === "conversation" ? byConversation.get(c.conversationId) : c.messageId !== null ? byMessage.get(c.messageId) : undefined;
    if (found) out.set(`${c.entityType}:${c.entityId}`, found);
  }
  return out;
}
