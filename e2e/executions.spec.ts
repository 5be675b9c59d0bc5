import fs from "node:fs";
import { parse } from "csv-parse/sync";
import ExcelJS from "exceljs";
import { expect, test } from "@playwright/test";
import { addSystemMetrics, importFixture, judge, latestExecutions, shot } from "./workspace-helpers";

test.describe("execution history and results", () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });
  test.afterEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("cancels a running run, shows history with filters, exports CSV and Excel, and the execution page", async ({ page, request }) => {
    const datasetId = await importFixture(request, "sample-dataset.json", `History ${Date.now()}`);
    await addSystemMetrics(request, datasetId, ["Task Completion", "Goal Achievement"]);
    await page.goto(`/datasets/${datasetId}`);

    // First run: completes.
    await page.getByRole("button", { name: "Run all" }).click();
    const first = page.getByTestId("run-status").first();
    await expect(first).toHaveAttribute("data-status", "completed", { timeout: 45_000 });
    const [completed] = await latestExecutions(request, datasetId);
    expect(completed.status).toBe("completed");

    // Second run: the judge never answers until the cancel, so the run is still going when it is
    // cancelled from history, however long the way there takes on a loaded machine (a 5 s latency was
    // not always enough: the run completed first). Its own model keeps the first run's cached verdicts
    // from answering at once; its calls wait under JUDGE_TIMEOUT_MS (30 s) and the cancel aborts them.
    await request.post(`${judge}/faults`, { data: { hang: 1 } });
    await page.getByLabel("Model override").fill(`slow-model-${Date.now()}`);
    await page.getByRole("button", { name: "Run all" }).click();
    await expect(page.getByTestId("run-status").nth(1)).toHaveAttribute("data-status", /pending|processing/);
    await page.getByRole("link", { name: "History", exact: true }).click();
    await expect(page.getByRole("heading", { name: "Execution history", level: 1 })).toBeVisible();
    const rows = page.getByRole("table", { name: "Executions" }).getByTestId("execution-row");
    await expect(rows).toHaveCount(2);
    const running = rows.first();
    await expect(running.getByTestId("execution-status")).toHaveText(/pending|processing/);
    await running.getByRole("button", { name: /^Cancel run/ }).click();
    await expect(running.getByTestId("execution-status")).toHaveText("cancelled");
    await request.post(`${judge}/reset`);
    const cancelledId = Number(await running.getAttribute("data-execution"));
    expect((await (await request.get(`/api/evaluation-pipeline-executions/${cancelledId}`)).json()).status).toBe("cancelled");

    // Filters: by status, then by metric.
    await page.getByLabel("Filter by status").selectOption("cancelled");
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toHaveAttribute("data-execution", String(cancelledId));
    await page.getByLabel("Filter by status").selectOption("");
    await page.getByLabel("Filter by metric").selectOption({ label: "Task Completion" });
    await expect(page.getByText("No runs match these filters")).toBeVisible();
    await page.getByLabel("Filter by metric").selectOption("");
    await expect(rows).toHaveCount(2);
    await shot(page, { path: "test-results/screenshots/history.png", fullPage: true });

    // Back on the grid by a client-side navigation, the cells show the stored results (not a page cached
    // before the runs), then back to the history.
    await page.getByRole("link", { name: /^← History/ }).click();
    const grid = page.getByRole("table", { name: "Evaluation grid" });
    await expect(grid.getByTestId("grid-cell")).toHaveCount(10);
    await expect(grid.locator('[data-testid=grid-cell][data-state="empty"]')).toHaveCount(0);
    await page.getByRole("link", { name: "History", exact: true }).click();
    await expect(rows).toHaveCount(2);

    // Exports of the completed run.
    const results = (await (await request.get(`/api/evaluation-pipeline-executions/${completed.id}/results`)).json()) as {
      results: unknown[];
    };
    expect(results.results.length).toBe(10);
    const completedRow = rows.filter({ has: page.locator(`[href="/executions/${completed.id}"]`) });

    await completedRow.getByRole("button", { name: `Export run #${completed.id}` }).click();
    const [csvDownload] = await Promise.all([page.waitForEvent("download"), page.getByRole("menuitem", { name: "CSV", exact: true }).click()]);
    expect(csvDownload.suggestedFilename()).toMatch(/\.csv$/);
    const csv = parse(fs.readFileSync(await csvDownload.path()), { columns: true, skip_empty_lines: true, bom: true }) as Array<Record<string, string>>;
    expect(csv.length).toBe(results.results.length);
    expect(csv.map((r) => r.metric_name)).toContain("Task Completion");
    expect(csv.map((r) => r.metric_name)).toContain("Goal Achievement");

    await completedRow.getByRole("button", { name: `Export run #${completed.id}` }).click();
    const [xlsxDownload] = await Promise.all([page.waitForEvent("download"), page.getByRole("menuitem", { name: "Excel (.xlsx)" }).click()]);
    expect(xlsxDownload.suggestedFilename()).toMatch(/\.xlsx$/);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(await xlsxDownload.path());
    const sheets = workbook.worksheets.map((w) => w.name);
    expect(sheets).toContain("Summary");
    const resultsSheet = workbook.worksheets.find((w) => w.name !== "Summary")!;
    expect(resultsSheet.actualRowCount).toBe(results.results.length + 1);
    const summaryText = JSON.stringify(workbook.getWorksheet("Summary")!.getSheetValues());
    expect(summaryText).toContain("Goal Achievement");

    // The execution page: aggregates with a chart per metric, the results, no errors.
    await completedRow.getByRole("link", { name: `#${completed.id}` }).click();
    await expect(page.getByRole("heading", { name: new RegExp(`Run #${completed.id}`), level: 1 })).toBeVisible();
    const cards = page.getByTestId("aggregate-card");
    await expect(cards).toHaveCount(2);
    await expect(cards.filter({ hasText: "Goal Achievement" })).toContainText("Average");
    await expect(cards.filter({ hasText: "Goal Achievement" })).toContainText("Std dev");
    await expect(page.getByTestId("distribution-chart").first().locator("svg.recharts-surface")).toBeVisible();
    await expect(page.getByTestId("distribution-chart").first().locator(".recharts-bar-rectangle").first()).toBeVisible();
    await expect(page.getByRole("table", { name: "Individual results" }).getByTestId("result-row")).toHaveCount(10);
    await shot(page, { path: "test-results/screenshots/execution.png", fullPage: true });

    // The cancelled run's page keeps the results finished before the cancel. Its retry has nothing to do here
    // (the first run answered every cell, and the hung calls saved nothing): it says so and records no
    // empty run (issue 34.5); a re-run starts one.
    await page.goto(`/executions/${cancelledId}`);
    await expect(page.getByRole("heading", { level: 1 })).toContainText("cancelled");
    const before = (await latestExecutions(request, datasetId)).length;
    await page.getByRole("button", { name: `Retry failed of run #${cancelledId}` }).click();
    await expect(page.getByRole("alert").filter({ hasText: /\S/ })).toHaveText("Nothing to retry: every cell of this scope already has a completed result");
    expect(await latestExecutions(request, datasetId)).toHaveLength(before);
    await page.getByRole("button", { name: `Re-run run #${cancelledId}` }).click();
    await expect(page.getByRole("status")).toContainText(/Started run #\d+/);
  });
});
