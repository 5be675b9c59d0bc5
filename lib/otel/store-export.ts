/**
 * An export's spans as rows to store, and the store of a whole export on an input-pool thread (no
 * `server-only`: lib/input-worker.ts runs it). On SQLite the thread decodes the body and stores its spans
 * with a connection of its own (db/sqlite-thread-store.ts), answering only counts and the conversations
 * touched, so the server's event loop neither decodes nor waits on SQLite's writer; the server then
 * schedules their rebuild (lib/otel/ingest.ts). Elsewhere (PostgreSQL, or where threads cannot start)
 * `ingestExport` stores the decoded spans in process with the same rows.
 */
import { storeSpansSteps, type SpanToStore } from "@/db/repositories/otel-span-store";
import { threadTransaction, type ThreadStore } from "@/db/sqlite-thread-store";
import { AppError } from "@/lib/errors";
import { decodeExportBody, type DecodedExport, type ExportBody } from "./decode";
import { conversationKeyOf, datasetNameOf } from "./grouping";
import type { OtelSpan } from "./types";

/** What storing an export did: the response's counts, and the conversations to rebuild. */
export type StoredExport = { accepted: number; duplicates: number; rejected: number; errorMessage?: string; conversationIds: number[] };

/**
 * The rows of an export's spans. An evaluation's verdict (a `gen_ai.evaluation.result` span, ours sent
 * back or another evaluator's) is about a conversation, not a turn of it: it never makes a conversation
 * grow, which would have it judged again by an online rule, and its verdict exported again, for ever.
 */
export function spanRows(spans: OtelSpan[]): SpanToStore[] {
  return spans
    .filter((span) => span.attributes["gen_ai.evaluation.name"] === undefined)
    .map((span) => ({
      datasetName: datasetNameOf(span.resource),
      traceId: span.traceId,
      spanId: span.spanId,
      name: span.name.slice(0, 1000),
      startNs: span.startNs,
      key: conversationKeyOf(span)?.slice(0, 500),
      data: span,
    }));
}

/** The partial success's message: the first reasons and how many more. */
export function rejectionMessage(decoded: DecodedExport): string | undefined {
  if (!decoded.rejected) return undefined;
  const more = decoded.rejected > decoded.errors.length ? `; and ${decoded.rejected - decoded.errors.length} more` : "";
  return `${decoded.rejected} span(s) rejected: ${decoded.errors.join("; ")}${more}`;
}

/** The input of the input pool's `ingestOtlp` task. */
export type IngestTask = { body: ExportBody; userId: string; store: ThreadStore; /** OTEL_SPAN_COMPRESSION is on. */ compress: boolean };

/**
 * On an input-pool thread: decode the export (then `decoded()`: what follows is no longer the caller's
 * work to time, see lib/input-pool.ts) and store its spans in one transaction on this thread's connection.
 */
export function storeExportOnThread(task: IngestTask, decoded: () => void = () => {}): StoredExport {
  const spans = decodeExportBody(task.body);
  decoded();
  const rows = spanRows(spans.spans);
  const now = new Date().toISOString();
  const sqlite = { name: "sqlite" as const, booleanParam: (value: boolean) => (value ? 1 : 0), exclusive: () => null };
  let result = { inserted: 0, duplicates: 0, conversationIds: [] as number[] };
  try {
    if (rows.length) result = threadTransaction(task.store, () => storeSpansSteps(sqlite, task.userId, rows, now, { compress: task.compress }));
  } catch (error) {
    // The writer stayed taken past the busy timeout: 503, which exporters retry (OTLP/HTTP), not a 500.
    if ((error as { code?: string }).code === "SQLITE_BUSY") throw new AppError("unavailable", "The database stayed busy past its time limit: export again later");
    throw error;
  }
  const errorMessage = rejectionMessage(spans);
  return { accepted: result.inserted, duplicates: result.duplicates, rejected: spans.rejected, ...(errorMessage ? { errorMessage } : {}), conversationIds: result.conversationIds };
}
