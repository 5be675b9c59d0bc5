import { parse } from "csv-parse/sync";
import ExcelJS from "exceljs";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { log } from "@/lib/log";
import { executionResultsSchema, executionSchema } from "@/lib/schemas/executions";
import { call } from "@/lib/testing/http/call";
import { insertConversationFixture } from "@/lib/testing/seed/rows";
import { addTestResult, addTestResults, createTestDataset, createTestExecution, createTestMetric } from "@/lib/testing/seed/results";
import { openSnapshot, resultPages } from "@/lib/results/read";
import * as exportRoute from "./route";
import * as resultsRoute from "../results/route";

type Fixture = Awaited<ReturnType<typeof seed>>;
let fx: Fixture;

async function seed() {
  const ds = await createTestDataset();
  const conv = await insertConversationFixture(ds.id, { name: "=cmd|' /C calc'!A0" });
  const progress = await createTestMetric(ds.id, "conversation", "progress", "Helpfulness");
  const checkbox = await createTestMetric(ds.id, "message", "checkbox", "Polite");
  const number = await createTestMetric(ds.id, "step", "number", "@Delta");
  const text = await createTestMetric(ds.id, "conversation", "text", "Summary");
  const json = await createTestMetric(ds.id, "conversation", "json", "Rubric");
  const exec = await createTestExecution(progress);
  const convEntity = { type: "conversation" as const, id: conv.conversationId, conversationId: conv.conversationId };
  const msgEntity = { type: "message" as const, id: conv.assistantMessageId, conversationId: conv.conversationId, messageId: conv.assistantMessageId };
  const first = await addTestResult({
    executionId: exec.id,
    node: progress,
    entity: convEntity,
    result: { score: 0.2, reasoning: '=HYPERLINK("http://x","y")' },
    score: 0.2,
    extra: { cached: true },
  });
  await addTestResult({ executionId: exec.id, node: checkbox, entity: msgEntity, result: { value: true, reasoning: "@SUM(1)" }, score: 1 });
  await addTestResult({
    executionId: exec.id,
    node: number,
    entity: { type: "step", id: conv.assistantMessageId, conversationId: conv.conversationId, messageId: conv.assistantMessageId },
    result: { value: -5, reasoning: "-2+3" },
    score: -5,
  });
  await addTestResult({ executionId: exec.id, node: text, entity: convEntity, result: { value: "All good, thanks" } });
  await addTestResult({ executionId: exec.id, node: json, entity: convEntity, result: { score: 0.7, label: "good" }, score: 0.7 });
  await addTestResult({ executionId: exec.id, node: progress, entity: convEntity, status: "failed", error: "judge timed out" });
  return { ds, conv, exec, first, nodes: { progress, checkbox, number, text, json } };
}

beforeAll(async () => {
  fx = await seed();
});

async function download(id: number | string, format: string): Promise<Response> {
  const req = new Request(`http://localhost/api/evaluation-pipeline-executions/${id}/export?format=${format}`);
  return exportRoute.GET(req, { params: Promise.resolve({ id: String(id) }) });
}

describe("GET /api/evaluation-pipeline-executions/{id}/results", () => {
  it("keeps its summaries right while they are remembered: a new result or a deleted metric shows at once", async () => {
    const ds = await createTestDataset();
    const conv = await insertConversationFixture(ds.id, { name: "cache" });
    const a = await createTestMetric(ds.id, "conversation", "progress", "A");
    const b = await createTestMetric(ds.id, "conversation", "progress", "B");
    const exec = await createTestExecution(a);
    const entity = { type: "conversation" as const, id: conv.conversationId, conversationId: conv.conversationId };
    await addTestResult({ executionId: exec.id, node: a, entity, result: { score: 0.2, reasoning: "r" }, score: 0.2 });
    await addTestResult({ executionId: exec.id, node: b, entity, result: { score: 0.6, reasoning: "r" }, score: 0.6 });
    const read = async () => (await call(resultsRoute.GET, "GET", "/x?limit=1", { params: { id: exec.id } })).json.aggregated;
    expect((await read())[a.id]).toMatchObject({ total: 1, average_score: 0.2 });
    expect(await read()).toEqual(await read()); // served from memory, the same figures
    await addTestResult({ executionId: exec.id, node: a, entity, result: { score: 0.8, reasoning: "r" }, score: 0.8 });
    expect((await read())[a.id]).toMatchObject({ total: 2, average_score: 0.5 });
    const { deleteMetric } = await import("@/lib/metrics");
    await deleteMetric(b.id);
    expect(Object.keys(await read())).toEqual([String(a.id)]);
  });


  it("returns every result with per-metric aggregates and the execution's errors", async () => {
    const res = await call(resultsRoute.GET, "GET", "/x", { params: { id: fx.exec.id } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = executionResultsSchema.parse(res.json);
    expect(body.execution_id).toBe(fx.exec.id);
    expect(body.results.map((r) => r.id)).toEqual([...body.results.map((r) => r.id)].sort((a, b) => a - b));
    expect(body.results).toHaveLength(6);
    expect(body.results[0]).toMatchObject({ id: fx.first.id, result: { score: 0.2 }, status: "completed", cached: true });
    const { nodes } = fx;
    expect(Object.keys(body.aggregated).sort()).toEqual(Object.values(nodes).map((n) => String(n.id)).sort());
    expect(body.aggregated[nodes.progress.id]).toEqual({
      total: 1,
      average_score: 0.2,
      min_score: 0.2,
      max_score: 0.2,
      std_dev: 0,
      distribution: { "0.0-0.2": 0, "0.2-0.4": 1, "0.4-0.6": 0, "0.6-0.8": 0, "0.8-1.0": 0 },
    });
    expect(body.aggregated[nodes.checkbox.id].distribution).toEqual({ true: 1, false: 0 });
    expect(body.aggregated[nodes.number.id]).toMatchObject({ total: 1, average_score: -5, distribution: { "-5--5": 1 } });
    expect(body.aggregated[nodes.text.id]).toMatchObject({ total: 1, average_score: null, distribution: {} });
    expect(body.aggregated[nodes.json.id].distribution["0.6-0.8"]).toBe(1);
    expect(body.errors).toEqual([
      { pipeline_node_id: nodes.progress.id, entity_type: "conversation", entity_id: fx.conv.conversationId, message: "judge timed out" },
    ]);
  });

  it("answers 404 for an unknown execution and 400 for a bad id", async () => {
    const missing = await call(resultsRoute.GET, "GET", "/x", { params: { id: 999999 } });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("not_found");
    expect((await call(resultsRoute.GET, "GET", "/x", { params: { id: "abc" } })).status).toBe(400);
  });

  it("returns one page with limit/offset, counting them all and aggregating over all", async () => {
    const whole = (await call(resultsRoute.GET, "GET", "/x", { params: { id: fx.exec.id } })).json;
    const page = await call(resultsRoute.GET, "GET", `/x?limit=4&offset=2`, { params: { id: fx.exec.id } });
    expect(page.status).toBe(200);
    expect(page.headers.get("x-total-count")).toBe("6");
    expect(page.json.results).toEqual(whole.results.slice(2, 6));
    expect(page.json.aggregated).toEqual(whole.aggregated);
    expect(page.json.errors).toEqual(whole.errors);
    const past = await call(resultsRoute.GET, "GET", `/x?limit=4&offset=10`, { params: { id: fx.exec.id } });
    expect(past.json.results).toEqual([]);
    for (const q of ["limit=0", "limit=abc", "limit=5001", "offset=-1"]) {
      expect((await call(resultsRoute.GET, "GET", `/x?${q}`, { params: { id: fx.exec.id } })).status, q).toBe(400);
    }
  });

  it("returns an empty document for an execution without results", async () => {
    const exec = await createTestExecution(fx.nodes.progress);
    const res = await call(resultsRoute.GET, "GET", "/x", { params: { id: exec.id } });
    expect(res.json).toEqual({ execution_id: exec.id, results: [], aggregated: {}, errors: [] });
  });
});

describe("GET /api/evaluation-pipeline-executions/{id}/export", () => {
  it("exports the same results as the results endpoint, in CSV, XLSX and JSON", async () => {
    const api = (await call(resultsRoute.GET, "GET", "/x", { params: { id: fx.exec.id } })).json as {
      results: Array<{ id: number; status: string; error: string | null; model_name: string | null; input_tokens: number; output_tokens: number; entity_id: number; result: unknown }>;
    };
    const csv: Record<string, string>[] = parse(await (await download(fx.exec.id, "csv")).text(), { columns: true });
    expect(csv.map((r) => Number(r.result_id))).toEqual(api.results.map((r) => r.id));
    for (const [i, r] of api.results.entries()) {
      expect(csv[i]).toMatchObject({
        status: r.status,
        error: r.error ?? "",
        model_name: r.model_name ?? "",
        input_tokens: String(r.input_tokens),
        output_tokens: String(r.output_tokens),
        entity_id: String(r.entity_id),
      });
    }
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(await (await download(fx.exec.id, "xlsx")).arrayBuffer());
    const sheet = book.getWorksheet("Results")!;
    const ids: number[] = [];
    sheet.eachRow((row, n) => void (n > 1 && ids.push(Number(row.getCell(1).value))));
    expect(ids).toEqual(api.results.map((r) => r.id));
    const json = JSON.parse(await (await download(fx.exec.id, "json")).text()) as { results: unknown[] };
    expect(json.results).toEqual(api.results);
  });

  it("exports CSV with every column, typed values and neutralised formulas", async () => {
    const res = await download(fx.exec.id, "csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="execution-${fx.exec.id}-results.csv"`);
    const text = await res.text();
    const rows: Record<string, string>[] = parse(text, { columns: true });
    expect(text.split("\n")[0]).toBe(
      "result_id,execution_id,metric_id,metric_name,output_type,entity_type,entity_id,conversation_id,conversation_name,message_id,step_id," +
        "status,score,value,reasoning,result_json,error,model_name,input_tokens,output_tokens,execution_time_ms,cached,created_at",
    );
    expect(rows).toHaveLength(6);
    const [progress, checkbox, number, textRow, json, failed] = rows;
    expect(progress).toMatchObject({
      result_id: String(fx.first.id),
      execution_id: String(fx.exec.id),
      metric_id: String(fx.nodes.progress.id),
      metric_name: "Helpfulness",
      output_type: "progress",
      entity_type: "conversation",
      // The conversation's name beside its id (issue 51), defused like any text.
      conversation_name: "'=cmd|' /C calc'!A0",
      message_id: "",
      status: "completed",
      score: "0.2",
      value: "",
      reasoning: `'=HYPERLINK("http://x","y")`,
      cached: "true",
      input_tokens: "10",
      execution_time_ms: "42",
    });
    expect(JSON.parse(progress.result_json)).toEqual({ score: 0.2, reasoning: '=HYPERLINK("http://x","y")' });
    expect(progress.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(checkbox).toMatchObject({ value: "true", score: "1", reasoning: "'@SUM(1)", cached: "false" });
    // Negative numbers are numbers, not formulas: they stay as they are. The metric name is defused.
    expect(number).toMatchObject({ value: "-5", score: "-5", reasoning: "'-2+3", metric_name: "'@Delta" });
    expect(textRow).toMatchObject({ value: "All good, thanks", score: "" });
    expect(json).toMatchObject({ score: "0.7", value: "" });
    expect(failed).toMatchObject({ status: "failed", error: "judge timed out", result_json: "", score: "" });
  });

  it("exports a real XLSX workbook: typed Results sheet and a Summary sheet", async () => {
    const res = await download(fx.exec.id, "xlsx");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="execution-${fx.exec.id}-results.xlsx"`);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(await res.arrayBuffer());
    expect(workbook.worksheets.map((w) => w.name)).toEqual(["Results", "Summary"]);

    const results = workbook.getWorksheet("Results")!;
    expect(results.rowCount).toBe(7);
    expect(results.views[0]).toMatchObject({ state: "frozen", ySplit: 1 });
    const header = results.getRow(1);
    expect(header.getCell(1).value).toBe("result_id");
    expect(header.getCell(23).value).toBe("created_at");
    expect(results.getRow(2).getCell(9).value).toBe("'=cmd|' /C calc'!A0");
    expect(header.getCell(1).font?.bold).toBe(true);
    const col = (name: string) => (header.values as unknown[]).indexOf(name);
    const first = results.getRow(2);
    expect(first.getCell(col("result_id")).type).toBe(ExcelJS.ValueType.Number);
    expect(first.getCell(col("score")).value).toBe(0.2);
    expect(first.getCell(col("cached")).value).toBe(true);
    expect(first.getCell(col("cached")).type).toBe(ExcelJS.ValueType.Boolean);
    expect(first.getCell(col("created_at")).value).toBeInstanceOf(Date);
    expect(first.getCell(col("reasoning")).value).toBe(`'=HYPERLINK("http://x","y")`);
    expect(first.getCell(col("reasoning")).type).toBe(ExcelJS.ValueType.String);
    expect(results.getRow(3).getCell(col("reasoning")).value).toBe("'@SUM(1)");
    expect(results.getRow(3).getCell(col("value")).value).toBe(true);
    const number = results.getRow(4);
    expect(number.getCell(col("reasoning")).value).toBe("'-2+3");
    expect(number.getCell(col("score")).value).toBe(-5);
    expect(number.getCell(col("value")).value).toBe(-5);
    expect(results.getRow(7).getCell(col("score")).value).toBeNull();
    for (let r = 1; r <= results.rowCount; r++) {
      results.getRow(r).eachCell((cell) => expect(cell.type).not.toBe(ExcelJS.ValueType.Formula));
    }

    const summary = workbook.getWorksheet("Summary")!;
    expect(summary.getRow(1).values).toEqual([
      undefined,
      "metric_id",
      "metric",
      "output_type",
      "total",
      "average",
      "min",
      "max",
      "std_dev",
      "distribution",
    ]);
    expect(summary.rowCount).toBe(6);
    expect(summary.getRow(2).values).toEqual([
      undefined,
      fx.nodes.progress.id,
      "Helpfulness",
      "progress",
      1,
      0.2,
      0.2,
      0.2,
      0,
      "0.0-0.2: 0, 0.2-0.4: 1, 0.4-0.6: 0, 0.6-0.8: 0, 0.8-1.0: 0",
    ]);
    expect(summary.getRow(4).getCell(2).value).toBe("'@Delta");
    expect(summary.getRow(4).getCell(9).value).toBe("'-5--5: 1");
  });

  it("exports JSON with the execution, aggregates and every result", async () => {
    const res = await download(fx.exec.id, "json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="execution-${fx.exec.id}-results.json"`);
    const body = JSON.parse(await res.text());
    expect(executionSchema.parse(body.execution).id).toBe(fx.exec.id);
    expect(body.execution.failed_evaluations).toBe(1);
    expect(body.results).toHaveLength(6);
    expect(body.results[0].result.reasoning).toBe('=HYPERLINK("http://x","y")');
    expect(body.aggregated[fx.nodes.checkbox.id].total).toBe(1);
    expect(body.metrics[0]).toEqual({ id: fx.nodes.progress.id, name: "Helpfulness", output_type: "progress" });
  });

  it("answers 404 for an unknown execution and 400 for a missing or unknown format", async () => {
    const missing = await download(999999, "csv");
    expect(missing.status).toBe(404);
    for (const format of ["pdf", "", "CSV"]) {
      const bad = await download(fx.exec.id, format);
      expect(bad.status).toBe(400);
      expect((await bad.json()).error.details[0].path).toBe("format");
    }
    const none = await exportRoute.GET(new Request("http://localhost/x/export"), { params: Promise.resolve({ id: String(fx.exec.id) }) });
    expect(none.status).toBe(400);
  });

  it("pages through more results than one page, in id order, header only when empty", async () => {
    const exec = await createTestExecution(fx.nodes.progress);
    const entity = { type: "conversation" as const, id: fx.conv.conversationId, conversationId: fx.conv.conversationId };
    await addTestResults(Array.from({ length: 2345 }, (_, i) => ({ executionId: exec.id, node: fx.nodes.progress, entity, result: { score: (i % 11) / 10 }, score: (i % 11) / 10 })));
    const rows: Record<string, string>[] = parse(await (await download(exec.id, "csv")).text(), { columns: true });
    expect(rows).toHaveLength(2345);
    const ids = rows.map((r) => Number(r.result_id));
    expect(new Set(ids).size).toBe(2345);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const json = JSON.parse(await (await download(exec.id, "json")).text());
    expect(json.results).toHaveLength(2345);
    // (i % 11) / 10 over 2345 results: 0.0 and 0.1 → first bin; 1.0 goes to the last, closed bin.
    expect(Object.values(json.aggregated[fx.nodes.progress.id].distribution).reduce((a: number, b) => a + (b as number), 0)).toBe(2345);

    const empty = await createTestExecution(fx.nodes.progress);
    const csv = await (await download(empty.id, "csv")).text();
    expect(csv.trim().split("\n")).toHaveLength(1);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(await (await download(empty.id, "xlsx")).arrayBuffer());
    expect(wb.getWorksheet("Results")!.rowCount).toBe(1);
  });

  it("stops quietly when the client goes away mid-download", async () => {
    const exec = await createTestExecution(fx.nodes.progress);
    const entity = { type: "conversation" as const, id: fx.conv.conversationId, conversationId: fx.conv.conversationId };
    const reasoning = "x".repeat(400);
    await addTestResults(Array.from({ length: 1500 }, () => ({ executionId: exec.id, node: fx.nodes.progress, entity, result: { score: 0.5, reasoning }, score: 0.5 })));
    const errors = vi.spyOn(log, "error");
    for (const format of ["csv", "xlsx", "json"]) {
      const res = await download(exec.id, format);
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(first.done).toBe(false);
      await reader.cancel();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(errors).not.toHaveBeenCalled();
    errors.mockRestore();
  });

  it("leaves out results saved after the export started", async () => {
    const exec = await createTestExecution(fx.nodes.progress);
    const entity = { type: "conversation" as const, id: fx.conv.conversationId, conversationId: fx.conv.conversationId };
    await addTestResult({ executionId: exec.id, node: fx.nodes.progress, entity, score: 0.5, result: { score: 0.5 } });
    const snapshot = await openSnapshot(exec.id);
    await addTestResult({ executionId: exec.id, node: fx.nodes.progress, entity, score: 0.6, result: { score: 0.6 } });
    const scores: Array<number | null> = [];
    for await (const page of await resultPages(snapshot)) scores.push(...page.map((r) => r.score));
    expect(scores).toEqual([0.5]);
  });
});
