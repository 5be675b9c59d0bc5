import fs from "node:fs";
import { parse } from "csv-parse/sync";
import ExcelJS from "exceljs";
import { expect, test } from "@playwright/test";
import { addSystemMetrics, importFixture, judge } from "./workspace-helpers";

type GridRow = { entity_type: string; entity_id: number; cells: Record<string, { status: string; execution_id: number }> };

test.describe("grid export", () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("downloads the grid's latest verdicts with conversation meta as CSV, JSON and Excel from the toolbar", async ({ page, request }) => {
    const datasetId = await importFixture(request, "sample-dataset.json", `Grid export ${Date.now()}`);
    const [taskCompletion] = await addSystemMetrics(request, datasetId, ["Task Completion", "Response Helpfulness"]);
    await page.goto(`/datasets/${datasetId}`);
    await page.getByRole("button", { name: "Run all" }).click();
    await expect(page.getByTestId("run-status").first()).toHaveAttribute("data-status", "completed", { timeout: 45_000 });

    // What the grid shows, per level, through its own endpoint.
    const cells = new Map<string, { status: string; execution_id: number }>();
    for (const level of ["conversation", "message"]) {
      const rows = (await (await request.get(`/api/datasets/${datasetId}/grid?level=${level}&limit=500`)).json()) as GridRow[];
      for (const row of rows) for (const [metric, cell] of Object.entries(row.cells)) cells.set(`${metric}:${row.entity_type}:${row.entity_id}`, cell);
    }
    expect(cells.size).toBeGreaterThan(5);

    const toolbar = page.getByRole("toolbar", { name: "Run controls" });
    const download = async (label: string) => {
      await toolbar.getByRole("button", { name: "Export the grid" }).click();
      const [file] = await Promise.all([page.waitForEvent("download"), page.getByRole("menuitem", { name: label, exact: true }).click()]);
      return file;
    };

    const csvFile = await download("CSV");
    expect(csvFile.suggestedFilename()).toBe(`dataset-${datasetId}-grid.csv`);
    const csv = parse(fs.readFileSync(await csvFile.path()), { columns: true, skip_empty_lines: true }) as Array<Record<string, string>>;
    expect(csv).toHaveLength(cells.size);
    for (const row of csv) {
      const cell = cells.get(`${row.metric_id}:${row.entity_type}:${row.entity_id}`);
      expect(cell, `${row.metric_name} at ${row.entity_type} ${row.entity_id}`).toBeDefined();
      expect(row.status).toBe(cell!.status);
      expect(Number(row.execution_id)).toBe(cell!.execution_id);
    }
    const first = csv.find((r) => r.metric_id === String(taskCompletion) && r.conversation_name === "Flight to Lisbon");
    expect(first).toMatchObject({ "meta.channel": "web", "meta.customer_tier": "gold", "meta.ticket": "" });
    expect(csv.find((r) => r.conversation_name === "Refund via handoff")?.["meta.ticket"]).toBe("SUP-4411");

    // The same CSV for Excel: a UTF-8 byte order mark first, then the very same bytes.
    const excelCsv = fs.readFileSync(await (await download("CSV for Excel (UTF-8 with BOM)")).path());
    expect([...excelCsv.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(excelCsv.subarray(3).toString("utf8")).toBe(fs.readFileSync(await csvFile.path(), "utf8"));

    const jsonFile = await download("JSON");
    expect(jsonFile.suggestedFilename()).toBe(`dataset-${datasetId}-grid.json`);
    const json = JSON.parse(fs.readFileSync(await jsonFile.path(), "utf8")) as { rows: Array<Record<string, unknown>>; columns: string[] };
    expect(json.rows).toHaveLength(csv.length);
    expect(json.columns).toEqual(Object.keys(csv[0]));

    const xlsxFile = await download("Excel (.xlsx)");
    expect(xlsxFile.suggestedFilename()).toBe(`dataset-${datasetId}-grid.xlsx`);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(await xlsxFile.path());
    const sheet = workbook.getWorksheet("Grid")!;
    expect(sheet.actualRowCount).toBe(csv.length + 1);
    expect((sheet.getRow(1).values as unknown[]).slice(1)).toEqual(json.columns);
  });
});
