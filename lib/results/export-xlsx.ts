/**
 * The XLSX export, written with exceljs's streaming WorkbookWriter: a "Results" sheet with typed
 * cells (numbers, booleans, dates), a styled, frozen, filterable header, and a "Summary" sheet of
 * aggregates per metric. Rows are committed page by page and the writer waits while the client is
 * behind, so memory stays flat however many results there are.
 */
import "server-only";
import { once, type EventEmitter } from "node:events";
import { PassThrough, type Readable } from "node:stream";
import ExcelJS from "exceljs";
import { log } from "@/lib/log";
import type { Aggregated } from "@/lib/schemas/executions";
import { conversationNamesOf } from "./export-names";
import { EXPORT_COLUMNS, neutraliseFormula, toExportRecord, type ExportCell, type ExportColumn } from "./export-rows";
import { feed, finishAggregates, newAggregators, resultPages, type ExecutionSnapshot } from "./read";

export const XLSX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

const HEADER_FONT: Partial<ExcelJS.Font> = { bold: true, color: { argb: "FFFFFFFF" } };
const HEADER_FILL: ExcelJS.Fill = { type: "pattern", pattern: "solid", fgColor: { argb: "FF334155" } };
const WIDTHS: Partial<Record<ExportColumn, number>> = {
  metric_name: 28,
  reasoning: 60,
  result_json: 50,
  error: 40,
  model_name: 20,
  created_at: 22,
};
export const DATE_FORMAT = "yyyy-mm-dd hh:mm:ss";

type XlsxCell = string | number | boolean | Date | null;

/** Strings are defused; a timestamp becomes a real date cell. */
function xlsxCell(column: ExportColumn, value: ExportCell): XlsxCell {
  if (column === "created_at" && typeof value === "string") return new Date(value);
  return typeof value === "string" ? neutraliseFormula(value) : value;
}

export function styleHeader(row: ExcelJS.Row): void {
  row.font = HEADER_FONT;
  row.fill = HEADER_FILL;
  row.commit();
}

export function frozenSheet(workbook: ExcelJS.stream.xlsx.WorkbookWriter, name: string, columns: number) {
  const sheet = workbook.addWorksheet(name, { views: [{ state: "frozen", ySplit: 1 }] });
  sheet.autoFilter = { from: { row: 1, column: 1 }, to: { row: 1, column: columns } };
  return sheet;
}

/** Resolves on the first of the events (an "error" rejects); the other listeners are removed. */
async function firstEvent(...waits: Array<[EventEmitter, string]>): Promise<void> {
  const ac = new AbortController();
  const settle = (e: unknown) => {
    if (!ac.signal.aborted) throw e;
  };
  try {
    await Promise.race(waits.map(([emitter, event]) => once(emitter, event, { signal: ac.signal }).then(() => undefined, settle)));
  } finally {
    ac.abort();
  }
}

// How much uncompressed sheet XML may wait for the zip before the writer pauses.
const MAX_PENDING_ZIP_BYTES = 1024 * 1024;

/** A writable of archiver's own readable-stream copy: not a `node:stream` Writable, so duck-typed. */
type ZipInput = EventEmitter & { writableLength?: number; _writableState?: { length?: number } };

/**
 * The zip's input for a sheet: exceljs pipes each sheet into archiver through a PassThrough and
 * ignores its backpressure, so without watching it, rows pile up uncompressed in memory whenever
 * deflate is slower than the rows are made (which it is). Not a public API, hence the guards.
 */
function zipInput(sheet: ExcelJS.Worksheet): ZipInput | undefined {
  const buffer = (sheet as unknown as { stream?: { pipes?: unknown[] } }).stream;
  const pipe = buffer?.pipes?.[0];
  return pipe && typeof pipe === "object" && "once" in pipe && "write" in pipe ? (pipe as unknown as ZipInput) : undefined;
}

function pendingBytes(input: ZipInput): number {
  return input.writableLength ?? input._writableState?.length ?? 0;
}

/** Resolve once the zip has caught up with the rows and the client with the zip, or the client left. */
export async function whenDrained(sheet: ExcelJS.Worksheet, out: PassThrough): Promise<void> {
  const input = zipInput(sheet);
  while (input && pendingBytes(input) > MAX_PENDING_ZIP_BYTES && !out.destroyed) {
    await firstEvent([input, "drain"], [out, "close"]);
  }
  while (out.writableNeedDrain && !out.destroyed) await firstEvent([out, "drain"], [out, "close"]);
}

const SUMMARY_HEADER = ["metric_id", "metric", "output_type", "total", "average", "min", "max", "std_dev", "distribution"];

function summaryRow(metric: ExecutionSnapshot["metrics"][number], agg: Aggregated | undefined): XlsxCell[] {
  const distribution = Object.entries(agg?.distribution ?? {})
    .map(([bin, n]) => `${bin}: ${n}`)
    .join(", ");
  return [
    metric.nodeId,
    neutraliseFormula(metric.name),
    metric.outputType,
    agg?.total ?? 0,
    agg?.average_score ?? null,
    agg?.min_score ?? null,
    agg?.max_score ?? null,
    agg?.std_dev ?? null,
    neutraliseFormula(distribution),
  ];
}

async function writeWorkbook(snapshot: ExecutionSnapshot, out: PassThrough): Promise<void> {
  // Inline strings, not the shared-string table: that table would keep every distinct string in memory.
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  // archiver's errors do not travel down its pipe: end the download instead of leaving it hanging.
  (workbook as unknown as { zip?: EventEmitter }).zip?.on("error", (error: Error) => out.destroy(error));
  const results = frozenSheet(workbook, "Results", EXPORT_COLUMNS.length);
  results.columns = EXPORT_COLUMNS.map((key) => ({
    key,
    width: WIDTHS[key] ?? Math.max(12, key.length + 2),
    style: key === "created_at" ? { numFmt: DATE_FORMAT } : {},
  }));
  styleHeader(results.addRow([...EXPORT_COLUMNS]));

  const metrics = new Map(snapshot.metrics.map((m) => [m.nodeId, m]));
  const aggregators = newAggregators(snapshot);
  for await (const page of resultPages(snapshot)) {
    const names = await conversationNamesOf(page);
    for (const row of page) {
      feed(aggregators, row);
      const record = toExportRecord(row, metrics.get(row.pipelineNodeId), names.get(row.conversationId) ?? null);
      results.addRow(EXPORT_COLUMNS.map((c) => xlsxCell(c, record[c]))).commit();
    }
    await whenDrained(results, out);
    if (out.destroyed) return;
  }
  results.commit();

  const aggregated = finishAggregates(aggregators);
  const summary = frozenSheet(workbook, "Summary", SUMMARY_HEADER.length);
  summary.columns = SUMMARY_HEADER.map((key) => ({ key, width: key === "distribution" ? 80 : key === "metric" ? 28 : 14 }));
  styleHeader(summary.addRow(SUMMARY_HEADER));
  for (const metric of snapshot.metrics) summary.addRow(summaryRow(metric, aggregated[String(metric.nodeId)])).commit();
  summary.commit();
  await workbook.commit();
}

/** The workbook as a Node stream; an error mid-way ends the download (the status is already sent). */
export function xlsxExport(snapshot: ExecutionSnapshot): Readable {
  const out = new PassThrough({ highWaterMark: 256 * 1024 });
  writeWorkbook(snapshot, out).catch((error: unknown) => {
    log.error("xlsx export failed", { execution_id: snapshot.execution.id, error });
    out.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  return out;
}
