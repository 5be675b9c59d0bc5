/**
 * Downloads of the dataset grid's state (`GET /datasets/{id}/export`): the latest verdict of every cell
 * with the conversations' meta, as CSV, JSON or XLSX. Streamed page by page like the execution exports,
 * with the same formula-injection defence in CSV and XLSX.
 */
import "server-only";
import { pipeline, PassThrough, Readable } from "node:stream";
import { stringify } from "csv-stringify";
import ExcelJS from "exceljs";
import type { EventEmitter } from "node:events";
import { log } from "@/lib/log";
import { EXPORT_CONTENT_TYPES, type ExportFile, type ExportFormat } from "./export";
import { neutraliseFormula } from "./export-rows";
import { DATE_FORMAT, frozenSheet, styleHeader, whenDrained } from "./export-xlsx";
import { gridRecordPages, planGridExport, type GridExportPlan, type GridRecord, type GridValue } from "./grid-rows";
import { fromNodeReadable, textStream } from "./byte-stream";

/** Columns holding a timestamp: real date cells in XLSX. */
const DATE_COLUMNS = new Set(["updated_at"]);
const WIDTHS: Record<string, number> = { conversation_name: 28, label: 40, metric_name: 28, reasoning: 60, result: 50, error: 40, updated_at: 22 };

async function* gridRecords(plan: GridExportPlan) {
  for await (const page of gridRecordPages(plan)) yield* page;
}

/**
 * CSV and XLSX rows: a meta value that is an object or an array (often a whole task or trajectory) only on
 * the first row of its conversation at each level, empty on that conversation's later rows — it was repeated
 * on every cell (issue 51: 6.6 MB for 1,364 cells). Scalar meta values, what a spreadsheet filters on, stay
 * on every row; the JSON export keeps every value on every row.
 */
function nestedMetaOnce(plan: GridExportPlan): (record: GridRecord) => GridRecord {
  const metaColumns = plan.columns.filter((c) => c.startsWith("meta."));
  let previous: string | null = null;
  return (record) => {
    const key = `${String(record.entity_type)}:${String(record.conversation_id)}`;
    const repeat = key === previous;
    previous = key;
    if (!repeat) return record;
    const out = { ...record };
    for (const c of metaColumns) if (out[c] !== null && typeof out[c] === "object") out[c] = null;
    return out;
  };
}

async function* spreadsheetRecords(plan: GridExportPlan) {
  const once = nestedMetaOnce(plan);
  for await (const record of gridRecords(plan)) yield once(record);
}

/** Objects and arrays (a verdict, a meta value) as compact JSON text. */
function flat(value: GridValue): string | number | boolean | null {
  return value !== null && typeof value === "object" ? JSON.stringify(value) : value;
}

function csvExport(plan: GridExportPlan, bom: boolean): Readable {
  const csv = stringify({
    bom,
    header: true,
    columns: plan.columns,
    // Prefixes `'` to strings starting with = + - @ tab or CR; numbers stay numbers.
    escape_formulas: true,
    cast: { boolean: (v) => (v ? "true" : "false"), object: (v) => JSON.stringify(v) },
  });
  pipeline(Readable.from(spreadsheetRecords(plan)), csv, (error) => {
    // A client that stops reading ends the pipeline early: not a failure worth logging.
    if (error && (error as NodeJS.ErrnoException).code !== "ERR_STREAM_PREMATURE_CLOSE") {
      log.error("grid csv export failed", { dataset_id: plan.datasetId, error });
    }
  });
  return csv;
}

/** `{dataset_id, columns, metrics, rows}`: rows keyed by column, verdicts and meta values as JSON values. */
async function* jsonExport(plan: GridExportPlan): AsyncGenerator<string> {
  const metrics = plan.metrics.map((m) => ({ id: m.id, name: m.name, output_type: m.outputType, evaluation_level: m.evaluationLevel }));
  yield `{"dataset_id":${plan.datasetId},"columns":${JSON.stringify(plan.columns)},"metrics":${JSON.stringify(metrics)},"rows":[`;
  let separator = "";
  for await (const page of gridRecordPages(plan)) {
    if (page.length === 0) continue;
    yield separator + page.map((r) => JSON.stringify(r)).join(",");
    separator = ",";
  }
  yield "]}";
}

function xlsxCell(column: string, value: GridValue): string | number | boolean | Date | null {
  if (DATE_COLUMNS.has(column) && typeof value === "string") return new Date(value);
  const v = flat(value);
  return typeof v === "string" ? neutraliseFormula(v) : v;
}

async function writeWorkbook(plan: GridExportPlan, out: PassThrough): Promise<void> {
  // Inline strings: a shared-string table would keep every distinct string in memory.
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  (workbook as unknown as { zip?: EventEmitter }).zip?.on("error", (error: Error) => out.destroy(error));
  const sheet = frozenSheet(workbook, "Grid", plan.columns.length);
  sheet.columns = plan.columns.map((key) => ({
    key,
    width: WIDTHS[key] ?? Math.max(12, Math.min(30, key.length + 2)),
    style: DATE_COLUMNS.has(key) ? { numFmt: DATE_FORMAT } : {},
  }));
  // Column names carry meta keys from imported data: defused like any other text.
  styleHeader(sheet.addRow(plan.columns.map(neutraliseFormula)));
  const once = nestedMetaOnce(plan);
  for await (const page of gridRecordPages(plan)) {
    for (const record of page.map(once)) sheet.addRow(plan.columns.map((c) => xlsxCell(c, record[c] ?? null))).commit();
    await whenDrained(sheet, out);
    if (out.destroyed) return;
  }
  sheet.commit();
  await workbook.commit();
}

function xlsxExport(plan: GridExportPlan): Readable {
  const out = new PassThrough({ highWaterMark: 256 * 1024 });
  writeWorkbook(plan, out).catch((error: unknown) => {
    log.error("grid xlsx export failed", { dataset_id: plan.datasetId, error });
    out.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  return out;
}

/** A download of the dataset grid's latest verdicts (404 AppError for an unknown dataset). */
export async function exportGrid(datasetId: number, format: ExportFormat, opts: { bom?: boolean } = {}): Promise<ExportFile> {
  const plan = await planGridExport(datasetId);
  const body =
    format === "csv" ? fromNodeReadable(csvExport(plan, opts.bom ?? false)) : format === "xlsx" ? fromNodeReadable(xlsxExport(plan)) : textStream(jsonExport(plan));
  return { body, contentType: EXPORT_CONTENT_TYPES[format], filename: `dataset-${datasetId}-grid.${format}` };
}
