/**
 * Exports of an execution's results as CSV, JSON or XLSX, and the results document itself. Every
 * body is a stream read from keyset pages, so 100,000 results go out without being held in memory.
 */
import "server-only";
import { pipeline, Readable } from "node:stream";
import { stringify } from "csv-stringify";
import { log } from "@/lib/log";
import { conversationNamesOf } from "./export-names";
import { EXPORT_COLUMNS, toExportRecord, type ExportRecord } from "./export-rows";
import { XLSX_CONTENT_TYPE, xlsxExport } from "./export-xlsx";
import { executionResultsJson, exportJson } from "./json";
import { openSnapshot, resultPages, type ExecutionSnapshot } from "./read";
import { fromNodeReadable, textStream } from "./byte-stream";

export type ExportFormat = "csv" | "json" | "xlsx";

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  json: "application/json; charset=utf-8",
  xlsx: XLSX_CONTENT_TYPE,
};

export type ExportFile = { body: ReadableStream<Uint8Array>; contentType: string; filename: string };

async function* exportRecords(snapshot: ExecutionSnapshot): AsyncGenerator<ExportRecord> {
  const metrics = new Map(snapshot.metrics.map((m) => [m.nodeId, m]));
  for await (const page of resultPages(snapshot)) {
    const names = await conversationNamesOf(page);
    for (const row of page) yield toExportRecord(row, metrics.get(row.pipelineNodeId), names.get(row.conversationId) ?? null);
  }
}

function csvExport(snapshot: ExecutionSnapshot, bom: boolean): Readable {
  const csv = stringify({
    bom,
    header: true,
    columns: [...EXPORT_COLUMNS],
    // Prefixes `'` to strings starting with = + - @ tab or CR; numbers stay numbers.
    escape_formulas: true,
    cast: { boolean: (v) => (v ? "true" : "false") },
  });
  pipeline(Readable.from(exportRecords(snapshot)), csv, (error) => {
    // A client that stops reading ends the pipeline early: that is not a failure worth logging.
    if (error && (error as NodeJS.ErrnoException).code !== "ERR_STREAM_PREMATURE_CLOSE") {
      log.error("csv export failed", { execution_id: snapshot.execution.id, error });
    }
  });
  return csv;
}

/** A download of the execution's results (404 AppError for an unknown execution). */
export async function exportExecution(executionId: number, format: ExportFormat, opts: { bom?: boolean } = {}): Promise<ExportFile> {
  const snapshot = await openSnapshot(executionId);
  const body =
    format === "csv"
      ? fromNodeReadable(csvExport(snapshot, opts.bom ?? false))
      : format === "xlsx"
        ? fromNodeReadable(xlsxExport(snapshot))
        : textStream(exportJson(snapshot));
  return { body, contentType: EXPORT_CONTENT_TYPES[format], filename: `execution-${executionId}-results.${format}` };
}

/** The body of `GET /evaluation-pipeline-executions/{id}/results`, streamed (404 AppError if unknown). */
export async function executionResultsStream(executionId: number): Promise<ReadableStream<Uint8Array>> {
  return textStream(executionResultsJson(await openSnapshot(executionId)));
}
