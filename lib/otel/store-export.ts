/**
 * An export's spans as rows to store, and the store of a whole export on an input-pool thread (no
 * `server-only`: lib/input-worker.ts runs it). On SQLite the thread decodes the body and stores its spans
 * with a connection of its own (db/sqlite-thread-store.ts), answering only counts and the conversations
 * touched, so the server's event loop neither decodes nor waits on SQLite's writer; the server then
 * schedules their rebuild (lib/otel/ingest.ts). Elsewhere (PostgreSQL, or where threads cannot start)
 * `ingestExport` stores the decoded spans in process with the same rows.
 */
import fs from "node:fs";
import path from "node:path";
import { threadId } from "node:worker_threads";
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
    .filter(isStoredSpan)
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

/** Whether a span is stored (an evaluation's verdict is not: see `spanRows`). */
const isStoredSpan = (span: OtelSpan): boolean => span.attributes["gen_ai.evaluation.name"] === undefined;

/** The partial success's message: the first reasons and how many more. */
export function rejectionMessage(decoded: DecodedExport): string | undefined {
  if (!decoded.rejected) return undefined;
  const more = decoded.rejected > decoded.errors.length ? `; and ${decoded.rejected - decoded.errors.length} more` : "";
  return `${decoded.rejected} span(s) rejected: ${decoded.errors.join("; ")}${more}`;
}

/** The input of the input pool's `ingestOtlp` task. */
export type IngestTask = {
  body: ExportBody;
  userId: string;
  store: ThreadStore;
  /** OTEL_SPAN_COMPRESSION is on. */
  compress: boolean;
};

/**
 * On an input-pool thread: decode the export (then `decoded()`: what follows is no longer the caller's
 * work to time, see lib/input-pool.ts) and store its spans in one transaction on this thread's connection.
 */
export function storeExportOnThread(task: IngestTask, decoded: () => void = () => {}): StoredExport {
  const spans = decodeExportBody(task.body);
  decoded();
  const rows = spanRows(spans.spans);
  // When stored (an inbox file's too): conversations' last_span_at only rises as stores commit, as the online rules' watermark expects.
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

/**
 * The trace inbox (lib/otel/inbox.ts): exports decoded and answered, their spans not stored yet, each kept
 * as a file beside the SQLite database until a pool thread has stored it. A file is its header (one line
 * of JSON: who sent it, how, when) and then the body exactly as received. Written under a temporary name
 * and renamed, so the inbox never holds half a file; names sort in the order the exports arrived.
 */
export const INBOX_SUFFIX = ".otlp";

/** The inbox folder of the SQLite database `file` (absolute). */
export function inboxDir(file: string): string {
  return `${file}-otel-inbox`;
}

type InboxHeader = { v: 1; userId: string; encoding: ExportBody["encoding"]; gzip: boolean; receivedAt: string };

/** The input of the `spoolOtlp` task: decode an export, then put it in the inbox if it has spans to store. */
export type SpoolTask = { body: ExportBody; userId: string; dir: string };
/**
 * What spooling did: the response's counts, and the inbox file's name and size (none when nothing was to
 * store); `unwritten`: why the file could not be written (a full disk), so the caller stores the export itself.
 */
export type SpooledExport = { spans: number; rejected: number; errorMessage?: string; file?: string; bytes: number; unwritten?: string };

let spooled = 0;

/**
 * On an input-pool thread: decode the export (timed, as `storeExportOnThread`), and when it has spans to
 * store write it to the inbox, whole or not at all. The exporter is answered once the file is in place.
 */
export function spoolExportOnThread(task: SpoolTask, decoded: () => void = () => {}): SpooledExport {
  const spans = decodeExportBody(task.body);
  decoded();
  const count = spans.spans.filter(isStoredSpan).length;
  const errorMessage = rejectionMessage(spans);
  const counts = { spans: count, rejected: spans.rejected, ...(errorMessage ? { errorMessage } : {}) };
  if (!count) return { ...counts, bytes: 0 };
  const header: InboxHeader = { v: 1, userId: task.userId, encoding: task.body.encoding, gzip: task.body.gzip, receivedAt: new Date().toISOString() };
  const name = `${String(Date.now()).padStart(15, "0")}-${process.pid}-${threadId}-${String(++spooled).padStart(9, "0")}${INBOX_SUFFIX}`;
  const data = Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), task.body.bytes]);
  const temporary = path.join(task.dir, `${name}.tmp`);
  try {
    fs.mkdirSync(task.dir, { recursive: true });
    fs.writeFileSync(temporary, data);
    fs.renameSync(temporary, path.join(task.dir, name));
  } catch (error) {
    try {
      fs.rmSync(temporary, { force: true });
    } catch {
      // nothing was written there
    }
    return { ...counts, bytes: 0, unwritten: (error as Error).message };
  }
  return { ...counts, file: name, bytes: data.length };
}

/** An inbox file's export, as the store reads it. */
export function readInboxFile(file: string, limits: Pick<ExportBody, "maxBytes" | "maxDepth">): { userId: string; receivedAt: string; body: ExportBody } {
  const data = fs.readFileSync(file);
  const end = data.indexOf(10);
  let header: InboxHeader | undefined;
  try {
    header = end > 0 ? (JSON.parse(data.subarray(0, end).toString("utf8")) as InboxHeader) : undefined;
  } catch {
    header = undefined;
  }
  if (header?.v !== 1 || typeof header.userId !== "string") throw new AppError("unprocessable", `${path.basename(file)} is not a trace inbox file`);
  return {
    userId: header.userId,
    receivedAt: header.receivedAt,
    body: { bytes: data.subarray(end + 1), encoding: header.encoding, gzip: header.gzip, ...limits },
  };
}

/** The input of the `storeSpooled` task: one inbox file to store. */
export type StoreSpooledTask = { file: string; store: ThreadStore; compress: boolean; limits: Pick<ExportBody, "maxBytes" | "maxDepth"> };

/** On an input-pool thread: store an inbox file's spans (as `storeExportOnThread`), then remove the file. */
export function storeSpooledOnThread(task: StoreSpooledTask, decoded: () => void = () => {}): StoredExport {
  const { userId, body } = readInboxFile(task.file, task.limits);
  const stored = storeExportOnThread({ body, userId, store: task.store, compress: task.compress }, decoded);
  // Stored: gone from the inbox. Should the process stop before this, the file is stored again, inserting nothing (spans are keyed).
  fs.rmSync(task.file, { force: true });
  return stored;
}
