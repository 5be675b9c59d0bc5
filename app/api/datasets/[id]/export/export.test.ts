import { eq } from "drizzle-orm";
import { parse } from "csv-parse/sync";
import ExcelJS from "exceljs";
import { beforeAll, describe, expect, it } from "vitest";
import { createNode } from "@/db/repositories/metrics";
import { database } from "@/db/store";
import { conversationsTable } from "@/db/tables";
import { call } from "@/lib/testing/http/call";
import { insertConversationFixture } from "@/lib/testing/seed/rows";
import { addTestResult, createTestDataset, createTestExecution, createTestMetric } from "@/lib/testing/seed/results";
import * as labels from "@/app/api/labels/route";
import * as metricItem from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import * as grid from "../grid/route";
import * as exportRoute from "./route";

type Fixture = Awaited<ReturnType<typeof seed>>;
let fx: Fixture;

async function seed() {
  const ds = await createTestDataset("grid export");
  const second = await insertConversationFixture(ds.id, { position: 1, name: "" });
  const first = await insertConversationFixture(ds.id, { position: 0, name: "Refund request" });
  // Ground truth and other meta as an import would store it; one value a spreadsheet would run as a formula.
  await (await database())
    .update(conversationsTable)
    .set({ meta: { reward: 0, channel: '=HYPERLINK("http://x","y")', tags: ["vip"] } })
    .where(eq(conversationsTable.id, second.conversationId));
  const progress = await createTestMetric(ds.id, "conversation", "progress", "Helpfulness");
  const checkbox = await createTestMetric(ds.id, "conversation", "checkbox", "=Resolved");
  const polite = await createTestMetric(ds.id, "message", "checkbox", "Polite");
  const steps = await createTestMetric(ds.id, "step", "number", "Step quality");
  const older = await createTestExecution(progress);
  const newer = await createTestExecution(progress);
  const conv = (f: typeof first) => ({ type: "conversation" as const, id: f.conversationId, conversationId: f.conversationId });
  await addTestResult({ executionId: older.id, node: progress, entity: conv(first), result: { score: 0.2, reasoning: "old" }, score: 0.2 });
  await addTestResult({ executionId: newer.id, node: progress, entity: conv(first), result: { score: 0.8, reasoning: "-new" }, score: 0.8 });
  await addTestResult({ executionId: older.id, node: progress, entity: conv(second), result: { score: 1 }, score: 1 });
  await addTestResult({ executionId: newer.id, node: progress, entity: conv(second), status: "failed", error: "rate limited" });
  await addTestResult({ executionId: older.id, node: checkbox, entity: conv(second), result: { value: true, reasoning: "done" }, score: 1 });
  await addTestResult({
    executionId: newer.id,
    node: polite,
    entity: { type: "message", id: first.assistantMessageId, conversationId: first.conversationId, messageId: first.assistantMessageId },
    result: { value: false, reasoning: "curt" },
    score: 0,
  });
  return { ds, first, second, progress, checkbox, polite, steps, older, newer };
}

beforeAll(async () => {
  fx = await seed();
});

async function download(format: string, id: number | string = fx.ds.id): Promise<Response> {
  const req = new Request(`http://localhost/api/datasets/${id}/export?format=${format}`);
  return exportRoute.GET(req, { params: Promise.resolve({ id: String(id) }) });
}

type JsonExport = { dataset_id: number; columns: string[]; metrics: Array<{ id: number; name: string; evaluation_level: string }>; rows: Array<Record<string, unknown>> };

async function jsonExport(): Promise<JsonExport> {
  const res = await download("json");
  expect(res.status).toBe(200);
  return (await res.json()) as JsonExport;
}

type GridCell = { status: string; result: unknown; error: string | null; execution_id: number; updated_at: string };

/** What the grid endpoint shows, level by level: its rows, and a `metric:entity` → cell map. */
async function gridState() {
  const rows: Array<{ entity_type: string; entity_id: number }> = [];
  const cells = new Map<string, GridCell>();
  for (const level of ["conversation", "message", "step"]) {
    const res = await call(grid.GET, "GET", `/api/datasets/${fx.ds.id}/grid?level=${level}&limit=500`, { params: { id: fx.ds.id } });
    for (const row of res.json as Array<{ entity_type: string; entity_id: number; cells: Record<string, GridCell> }>) {
      rows.push(row);
      for (const [metric, cell] of Object.entries(row.cells)) cells.set(`${metric}:${row.entity_type}:${row.entity_id}`, cell);
    }
  }
  return { rows, cells };
}

const metaColumns = ["meta.channel", "meta.n", "meta.reward", "meta.tags"];

describe("GET /api/datasets/{id}/export", () => {
  it("carries each cell's latest human label and what the metric's reference says", async () => {
    // Ground truth from the data: "=Resolved" passes where meta.reward ≥ 1 (the second conversation has 0).
    const ref = await call(metricItem.PATCH, "PATCH", "/x", {
      params: { id: fx.checkbox.id },
      body: { reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } } },
    });
    expect(ref.status).toBe(200);
    const label = (value: unknown, note?: string, user = "ana") =>
      call(labels.POST, "POST", "/x", {
        headers: { "x-user-id": user },
        body: { dataset_id: fx.ds.id, pipeline_node_id: fx.checkbox.id, entity_type: "conversation", entity_id: fx.second.conversationId, value, note },
      });
    expect((await label(true)).status).toBe(201);
    expect((await label(false, "the refund never went out")).status).toBe(201); // a relabel: the latest counts
    const body = await jsonExport();
    const row = body.rows.find((r) => r.metric_id === fx.checkbox.id && r.entity_id === fx.second.conversationId);
    expect(row).toMatchObject({ value: true, label_value: false, label_note: "the refund never went out", label_user: "ana", reference: "conversation.meta.reward >= 1", reference_value: false });
    expect(typeof row?.labelled_at).toBe("string");
    const unlabelled = body.rows.find((r) => r.metric_id === fx.progress.id && r.entity_id === fx.second.conversationId);
    expect(unlabelled).toMatchObject({ label_value: null, reference: null, reference_value: null });
    // The same in CSV: a header for each, the values as text.
    const csv = parse(await (await download("csv")).text(), { columns: true }) as Array<Record<string, string>>;
    const csvRow = csv.find((r) => r.metric_id === String(fx.checkbox.id) && r.entity_id === String(fx.second.conversationId));
    expect(csvRow).toMatchObject({ label_value: "false", label_user: "ana", reference_value: "false" });
    // Leave the fixture as the other tests expect it.
    await call(metricItem.PATCH, "PATCH", "/x", { params: { id: fx.checkbox.id }, body: { reference: null } });
  });

  it("JSON: one row per cell, holding exactly the grid's latest verdicts, with the conversations' meta", async () => {
    const body = await jsonExport();
    expect(body.dataset_id).toBe(fx.ds.id);
    expect(body.columns.slice(0, 3)).toEqual(["entity_type", "entity_id", "conversation_id"]);
    expect(body.columns.slice(-10, -6)).toEqual(metaColumns);
    expect(body.columns.slice(-6)).toEqual(["label_value", "label_note", "label_user", "labelled_at", "reference", "reference_value"]);
    expect(body.metrics.map((m) => m.name)).toEqual(["Helpfulness", "=Resolved", "Polite", "Step quality"]);

    const { rows, cells } = await gridState();
    // Every grid row times every metric of its level: 2 conversations × 2, 2 assistant messages × 1, 4 steps × 1.
    const metricsAt = (level: string) => body.metrics.filter((m) => m.evaluation_level === level).length;
    expect(body.rows).toHaveLength(rows.reduce((n, r) => n + metricsAt(r.entity_type), 0));
    expect(body.rows).toHaveLength(2 * 2 + 2 + 4);
    for (const row of body.rows) {
      const cell = cells.get(`${row.metric_id}:${row.entity_type}:${row.entity_id}`);
      if (!cell) {
        expect(row).toMatchObject({ status: null, result: null, execution_id: null, score: null, updated_at: null });
        continue;
      }
      expect({ status: row.status, result: row.result, error: row.error, execution_id: row.execution_id, updated_at: row.updated_at }).toEqual(cell);
    }
    const evaluated = body.rows.filter((r) => r.status !== null);
    expect(evaluated).toHaveLength(cells.size);

    // Grid order (conversation position first), metrics in column order within an entity.
    expect(body.rows.slice(0, 4).map((r) => [r.conversation_name, r.metric_name])).toEqual([
      ["Refund request", "Helpfulness"],
      ["Refund request", "=Resolved"],
      ["Conversation 2", "Helpfulness"],
      ["Conversation 2", "=Resolved"],
    ]);
    const [latest, , failed, checked] = body.rows;
    expect(latest).toMatchObject({ status: "completed", score: 0.8, reasoning: "-new", execution_id: fx.newer.id, model_name: "judge-double" });
    expect(failed).toMatchObject({ status: "failed", error: "rate limited", score: null, execution_id: fx.newer.id });
    expect(checked).toMatchObject({ value: true, "meta.reward": 0, "meta.tags": ["vip"], "meta.n": null });
    expect(latest).toMatchObject({ "meta.channel": "web", "meta.n": [1, 2], "meta.reward": null });
    const politeRow = body.rows.find((r) => r.metric_id === fx.polite.id && r.entity_id === fx.first.assistantMessageId);
    expect(politeRow).toMatchObject({ entity_type: "message", message_id: fx.first.assistantMessageId, value: false, label: "found x", role: "assistant" });
    expect(body.rows.filter((r) => r.entity_type === "step").every((r) => r.status === null && r.step_id === r.entity_id)).toBe(true);
  });

  it("CSV: the same rows and columns, objects as JSON text, formulas defused", async () => {
    const res = await download("csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="dataset-${fx.ds.id}-grid.csv"`);
    const [header, ...lines] = parse(await res.text(), { relax_column_count: false }) as string[][];
    const body = await jsonExport();
    expect(header).toEqual(body.columns);
    expect(lines).toHaveLength(body.rows.length);
    const asCsv = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));
    const defused = (s: string) => (/^[=+\-@\t\r]/.test(s) ? `'${s}` : s);
    // A nested meta value (an object or array) only on the first row of its conversation at a level.
    const repeats = (i: number) => i > 0 && body.rows[i - 1].entity_type === body.rows[i].entity_type && body.rows[i - 1].conversation_id === body.rows[i].conversation_id;
    const shown = (i: number, c: string) => (c.startsWith("meta.") && repeats(i) && typeof body.rows[i][c] === "object" ? null : body.rows[i][c]);
    lines.forEach((line, i) => {
      expect(line).toEqual(body.columns.map((c) => defused(asCsv(shown(i, c)))));
    });
    const checked = lines[3];
    expect(checked[header.indexOf("metric_name")]).toBe("'=Resolved");
    expect(checked[header.indexOf("meta.channel")]).toBe(`'=HYPERLINK("http://x","y")`);
    expect(lines[0][header.indexOf("reasoning")]).toBe("'-new");
    expect(lines[0][header.indexOf("score")]).toBe("0.8");
  });

  it("CSV for Excel: bom=true starts the file with a UTF-8 byte order mark and nothing else changes; without it, none", async () => {
    const plain = new Uint8Array(await (await download("csv")).arrayBuffer());
    const res = await download("csv&bom=true");
    expect(res.status).toBe(200);
    const withBom = new Uint8Array(await res.arrayBuffer());
    expect([...withBom.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(plain[0]).not.toBe(0xef);
    expect(Buffer.from(withBom.subarray(3)).equals(Buffer.from(plain))).toBe(true);
    expect((await download("csv&bom=maybe")).status).toBe(400);
  });

  it("XLSX: a Grid sheet with the same rows, typed cells, a frozen header and defused text", async () => {
    const res = await download("xlsx");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="dataset-${fx.ds.id}-grid.xlsx"`);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(Buffer.from(await res.arrayBuffer()) as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet("Grid");
    expect(sheet).toBeDefined();
    const values = (n: number) => (sheet!.getRow(n).values as unknown[]).slice(1);
    const body = await jsonExport();
    expect(values(1)).toEqual(body.columns);
    expect(sheet!.rowCount).toBe(body.rows.length + 1);
    expect(sheet!.views[0]).toMatchObject({ state: "frozen", ySplit: 1 });
    const col = (name: string) => body.columns.indexOf(name);
    const latest = values(2);
    expect(latest[col("score")]).toBe(0.8);
    expect(latest[col("reasoning")]).toBe("'-new");
    expect(latest[col("updated_at")]).toBeInstanceOf(Date);
    expect((latest[col("updated_at")] as Date).toISOString()).toBe(new Date(body.rows[0].updated_at as string).toISOString());
    expect(latest[col("meta.n")]).toBe("[1,2]");
    const checked = values(5);
    expect(checked[col("value")]).toBe(true);
    expect(checked[col("metric_name")]).toBe("'=Resolved");
    expect(checked[col("meta.channel")]).toBe(`'=HYPERLINK("http://x","y")`);
    expect(checked[col("meta.reward")]).toBe(0);
    // Row by row, the same verdicts as the JSON export.
    body.rows.forEach((row, i) => {
      const cells = values(i + 2);
      expect(cells[col("metric_id")]).toBe(row.metric_id);
      expect(cells[col("entity_id")]).toBe(row.entity_id);
      expect(cells[col("status")] ?? null).toBe(row.status);
    });
  });

  it("a dataset without metrics exports the header only; 404 for an unknown dataset, 400 for a bad format", async () => {
    const empty = await createTestDataset("no metrics");
    await insertConversationFixture(empty.id);
    const csv = await download("csv", empty.id);
    expect(csv.status).toBe(200);
    const [header, ...lines] = parse(await csv.text()) as string[][];
    expect(header).toContain("meta.channel");
    expect(lines).toEqual([]);
    const json = await download("json", empty.id);
    expect(await json.json()).toMatchObject({ dataset_id: empty.id, metrics: [], rows: [] });

    const missing = await download("csv", 999_999);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toBe("Dataset 999999 does not exist");
    for (const bad of ["pdf", ""]) {
      const res = await download(bad);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { details: Array<{ path: string }> } }).error.details.map((d) => d.path)).toContain("format");
    }
    expect((await download("csv", "abc")).status).toBe(400);
  });
});

describe("GET /api/datasets/{id}/export: rows a user can use (issue 51)", () => {
  it("no row for a step a metric does not judge; a nested meta value once per conversation and level in CSV, on every row in JSON", async () => {
    const ds = await createTestDataset("grid export, applies_to");
    const conv = await insertConversationFixture(ds.id, { position: 0, name: "Trip" });
    const trajectory = { task: { instruction: "book a flight", actions: [{ name: "search" }, { name: "book" }] } };
    await (await database()).update(conversationsTable).set({ meta: { reward: 1, info: trajectory } }).where(eq(conversationsTable.id, conv.conversationId));
    // Judges tool calls only: of the fixture's two steps (a tool call, an output) only the first is a cell.
    const toolCalls = await createNode(ds.id, { name: "Tool call valid", evaluationLevel: "step", prompt: "Judge this.", outputType: "checkbox", appliesTo: ["tool_call"] });
    await createTestMetric(ds.id, "conversation", "progress", "Helpfulness");
    await createTestMetric(ds.id, "conversation", "checkbox", "Resolved");

    const res = await download("json", ds.id);
    const body = (await res.json()) as JsonExport;
    const steps = body.rows.filter((r) => r.entity_type === "step");
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({ metric_id: toolCalls.id });
    const conversationRows = body.rows.filter((r) => r.entity_type === "conversation");
    expect(conversationRows.map((r) => r["meta.info"])).toEqual([trajectory, trajectory]);

    const [header, ...lines] = parse(await (await download("csv", ds.id)).text()) as string[][];
    expect(lines).toHaveLength(3);
    const info = header.indexOf("meta.info");
    const reward = header.indexOf("meta.reward");
    // Conversation rows: the trajectory on the first only; the scalar reward on both. The step row: its own first.
    expect(lines.map((l) => l[info])).toEqual([JSON.stringify(trajectory), "", JSON.stringify(trajectory)]);
    expect(lines.map((l) => l[reward])).toEqual(["1", "1", "1"]);
  });
});
