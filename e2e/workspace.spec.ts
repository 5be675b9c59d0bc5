import path from "node:path";
import { expect, test } from "@playwright/test";
import { addSystemMetrics, fixtures, importFixture, judge, latestExecutions, recordCellStates, recordedCellStates, shot } from "./workspace-helpers";

test.describe("dataset workspace", () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });
  test.afterEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("imports the sample, adds a system metric, runs all async and watches cells turn complete live", async ({ page, request }) => {
    const name = `Workspace sample ${Date.now()}`;
    await page.goto("/import");
    await page.getByLabel("choose a file").setInputFiles(path.join(fixtures, "sample-dataset.json"));
    await page.getByLabel("Dataset name").fill(name);
    await page.getByRole("button", { name: "Import" }).click();
    await page.getByTestId("import-success").getByRole("link", { name: "Open dataset →" }).click();
    await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible();
    const datasetId = Number(new URL(page.url()).pathname.split("/").pop());

    const grid = page.getByRole("table", { name: "Evaluation grid" });
    await expect(grid.getByTestId("grid-row")).toHaveCount(5);
    await expect(grid.getByTestId("grid-row").first()).toContainText("Flight to Lisbon");

    // A system metric from the toolbar's menu becomes a column with its level and output type.
    await page.getByRole("button", { name: "Add metric" }).click();
    await page.getByRole("menuitem", { name: "Goal Achievement", exact: true }).click();
    const header = grid.getByTestId("metric-header").filter({ hasText: "Goal Achievement" });
    await expect(header).toBeVisible();
    await expect(header).toContainText("Conversation");
    await expect(header).toContainText("Score 0–1");
    // More output types and levels, added the way a script would.
    await addSystemMetrics(request, datasetId, ["Task Completion", "Response Helpfulness", "Tool Selection"]);
    await page.reload();
    await expect(grid.getByTestId("metric-header")).toHaveCount(4);

    // Slow the judge a little so that the pending and processing states are there to be seen.
    await request.post(`${judge}/latency`, { data: 700 });
    await page.getByRole("radiogroup", { name: "Mode" }).getByText("Async").click();
    await page.getByLabel("Batch size").fill("4");
    // The toolbar's mode and batch size survive a reload.
    await page.reload();
    await expect(page.getByRole("radiogroup", { name: "Mode" }).getByRole("radio", { name: "Async" })).toBeChecked();
    await expect(page.getByLabel("Batch size")).toHaveValue("4");
    // A model of this test's own: verdicts other specs cached for the same sample prompts would otherwise
    // answer this run's cells at once, and a cached cell does not wait behind the run's judge calls.
    await page.getByLabel("Model override").fill(`gpt-4o-mini-workspace-${Date.now()}`);
    await recordCellStates(page);
    await page.getByRole("button", { name: "Run all" }).click();

    await expect(grid.locator('[data-testid=grid-cell][data-state="pending"], [data-testid=grid-cell][data-state="processing"]').first()).toBeVisible();
    await expect(page.getByRole("progressbar", { name: /Run #\d+ progress/ })).toBeVisible();
    // The judge's live limit and its 429 count are shown while the run goes on.
    await expect(page.getByTestId("run-limiter").first()).toContainText(/up to \d+ calls at once · 0 rate-limited answers/);
    const run = page.getByTestId("run-status").first();
    await expect(run).toHaveAttribute("data-status", "completed", { timeout: 45_000 });
    await expect(run).toContainText("failed of");
    // Five conversations × two conversation-level metrics, all complete without a reload.
    await expect(grid.locator('[data-testid=grid-cell][data-state="completed"]')).toHaveCount(10);

    const { states, reloaded } = await recordedCellStates(page);
    expect(reloaded, "the page must not reload during a run").toBe(false);
    const watched = Object.entries(states).filter(([key]) => key.includes(":conversation:"));
    expect(watched.length).toBe(10);
    for (const [key, seq] of watched) {
      expect(seq[0], key).toBe("empty");
      expect(seq[seq.length - 1], key).toBe("completed");
      expect(seq.indexOf("pending") >= 0 || seq.indexOf("processing") >= 0, `${key}: ${seq.join(" → ")}`).toBe(true);
    }

    // The message- and step-level metrics are summed up on each conversation's row once the run ends
    // (a run at those levels looked empty until a row was opened).
    const lisbon = grid.getByTestId("grid-row").filter({ hasText: "Flight to Lisbon" });
    await expect(lisbon.getByTestId("grid-rollup")).toHaveCount(2);
    await expect(lisbon.getByTestId("grid-rollup").first()).toContainText(/avg \d\.\d\d|\d+\/\d+ pass|judged/);
    // A conversation with one assistant reply says so in the singular.
    const single = grid.getByTestId("grid-row").filter({ hasText: "Prompt injection in user text" });
    await expect(single.getByTestId("grid-rollup").first()).toContainText("(1 message)");

    // Expanding a conversation shows its assistant messages and their steps, each with its level.
    await lisbon.getByRole("button", { name: "Expand Flight to Lisbon" }).click();
    await expect(grid.locator('[data-testid=grid-row][data-level="message"]').first()).toBeVisible();
    await expect(grid.locator('[data-testid=grid-row][data-level="step"]').first()).toBeVisible();
    await expect(grid.locator('[data-testid=grid-row][data-level="step"]').first().getByTestId("row-level")).toHaveText("Step");
    await expect(grid.locator('[data-testid=grid-row][data-level="step"] [data-testid=grid-cell][data-state="completed"]').first()).toBeVisible();
    await page.mouse.move(0, 0);
    await shot(page, { path: "test-results/screenshots/grid.png" });

    // A result's reasoning is one click away.
    await lisbon.getByRole("button", { name: /Goal Achievement on Flight to Lisbon: show result/ }).click();
    const detail = page.getByRole("dialog", { name: "Goal Achievement result" });
    await expect(detail.getByTestId("cell-reasoning")).not.toBeEmpty();
    await shot(page, { path: "test-results/screenshots/cell-detail.png" });
    await page.keyboard.press("Escape");
    await expect(detail).toBeHidden();

    // A JSON result: its score, and the whole object in a viewer.
    // Tool Selection judges tool-call steps only (applies_to): the first step, a thinking step, is n/a.
    const steps = grid.locator('[data-testid=grid-row][data-level="step"]');
    await expect(steps.first().locator('[data-testid=grid-cell][data-state="n/a"]')).toHaveCount(1);
    await steps.filter({ hasText: "tool_call" }).first().getByRole("button", { name: /^Tool Selection on .*: show result/ }).click();
    const jsonDetail = page.getByRole("dialog", { name: "Tool Selection result" });
    await expect(jsonDetail.getByLabel("Judge's answer")).toBeVisible();
    await shot(page, { path: "test-results/screenshots/cell-detail-json.png" });
    await page.keyboard.press("Escape");
    await expect(jsonDetail).toBeHidden();

    // Clicking the row opens the conversation with its steps, tool calls and arguments as text.
    await lisbon.getByText("Flight to Lisbon", { exact: true }).click();
    const panel = page.getByRole("complementary", { name: "Conversation" });
    await expect(panel.getByRole("heading", { name: "Flight to Lisbon" })).toBeVisible();
    const toolCall = panel.getByTestId("tool-call").filter({ hasText: "search_flights" });
    await expect(toolCall).toBeVisible();
    await expect(toolCall).toContainText('"destination": "LIS"');
    await expect(panel).toContainText("agent: travel_agent");
    await expect(panel).toContainText("model: gpt-4o-mini");
    await expect(panel).toContainText('"customer_tier": "gold"');
    await toolCall.scrollIntoViewIfNeeded();
    await shot(page, { path: "test-results/screenshots/conversation-panel.png" });
    await page.keyboard.press("Escape");
    await expect(panel).toBeHidden();
  });

  test("runs a single cell, a row, a column and two runs at once from their controls", async ({ page, request }) => {
    const datasetId = await importFixture(request, "sample-dataset.json", `Workspace scopes ${Date.now()}`);
    await addSystemMetrics(request, datasetId, ["Task Completion", "Goal Achievement"]);
    await page.goto(`/datasets/${datasetId}`);
    const grid = page.getByRole("table", { name: "Evaluation grid" });
    const refund = grid.getByTestId("grid-row").filter({ hasText: "Refund via handoff" });

    // A cell, from the keyboard.
    await refund.getByRole("button", { name: "Run Task Completion on Refund via handoff" }).focus();
    await page.keyboard.press("Enter");
    await expect(refund.locator('[data-testid=grid-cell][data-state="completed"]')).toHaveCount(1);
    await expect(page.getByTestId("run-status").first()).toContainText("Cell · Task Completion");

    // A row: both metrics of that conversation.
    await refund.hover();
    await refund.getByRole("button", { name: "Run every metric on Refund via handoff" }).click();
    await expect(refund.locator('[data-testid=grid-cell][data-state="completed"]')).toHaveCount(2);

    // A column, from its header menu (which closes on Escape too).
    const header = grid.getByTestId("metric-header").filter({ hasText: "Goal Achievement" });
    await header.getByRole("button", { name: "Goal Achievement column actions" }).click();
    await expect(page.getByRole("menu", { name: "Goal Achievement column actions" })).toBeVisible();
    await page.keyboard.press("Escape");
    await expect(page.getByRole("menu")).toBeHidden();
    await header.getByRole("button", { name: "Goal Achievement column actions" }).click();
    await page.getByRole("menuitem", { name: "Run column" }).click();
    await expect(page.getByTestId("run-status").filter({ hasText: "Column · Goal Achievement" })).toHaveAttribute("data-status", "completed");
    await expect(grid.locator('[data-testid=grid-cell][data-cell*=":conversation:"][data-state="completed"]')).toHaveCount(6);

    // Two runs at once (both columns, a fresh model so nothing comes from the verdict cache): both are
    // followed live and every cell ends complete. A sync column run judges its 5 cells one after the
    // other, so it lasts 5 × the judge's latency; starting the second run takes two clicks, which took
    // 1.5 s on a loaded machine. At 250 ms the first run (1.25 s) was often over before the second
    // began and the two were never seen running together; at 1.5 s a run lasts 7.5 s.
    // Sync: the page starts runs async by default, which would finish a column in one judge latency.
    await page.getByRole("radiogroup", { name: "Mode" }).getByText("Sync", { exact: true }).click();
    await page.getByLabel("Model override").fill(`concurrent-${Date.now()}`);
    await request.post(`${judge}/latency`, { data: 1_500 });
    const columnRuns = page.getByTestId("run-status").filter({ hasText: "Column ·" });
    for (const [i, name] of ["Task Completion", "Goal Achievement"].entries()) {
      await grid.getByTestId("metric-header").filter({ hasText: name }).getByRole("button", { name: `${name} column actions` }).click();
      await page.getByRole("menuitem", { name: "Run column" }).click();
      // Its run's status bar pushes the grid down: the next header is clicked once it has (clicked while
      // the bar was appearing, under load, the click missed the moving header and no menu opened).
      await expect(columnRuns).toHaveCount(i + 2);
    }
    const concurrent = page.getByTestId("run-status").filter({ hasText: "Column ·" });
    await expect(concurrent.and(page.locator('[data-status="pending"], [data-status="processing"]'))).toHaveCount(2);
    await expect(page.locator('[data-testid=run-status][data-status="completed"]')).toHaveCount(5, { timeout: 30_000 });
    await expect(grid.locator('[data-testid=grid-cell][data-cell*=":conversation:"][data-state="completed"]')).toHaveCount(10);
  });

  test("shows a failed cell's message on hover and retries it on click", async ({ page, request }) => {
    const datasetId = await importFixture(request, "sample-dataset.json", `Workspace errors ${Date.now()}`);
    await addSystemMetrics(request, datasetId, ["Task Completion"]);
    // Every judge call fails: the cell records the failure as its result. A model override of its own
    // keeps verdicts cached by earlier tests (same conversations, default model) out of the way.
    await request.post(`${judge}/default`, { data: { kind: "http_error", status: 400, message: "model refused the request" } });
    await page.goto(`/datasets/${datasetId}`);
    const model = `refusing-model-${Date.now()}`;
    await page.getByLabel("Model override").fill(model);
    const grid = page.getByRole("table", { name: "Evaluation grid" });
    const row = grid.getByTestId("grid-row").filter({ hasText: "Plain chat, no steps" });
    await row.getByRole("button", { name: "Run Task Completion on Plain chat, no steps" }).click();
    const failed = row.locator('[data-testid=grid-cell][data-state="failed"]');
    await expect(failed).toBeVisible();
    await expect(failed.getByRole("button")).toHaveAttribute("title", /click to retry/);

    await expect(failed.getByRole("button")).toHaveAttribute("title", /model refused the request/);
    // The cell shows as its result is saved; the run ends just after (on PostgreSQL the process that saved the
    // last result writes the run's end next), so its status is read until it has ended.
    await expect.poll(async () => (await latestExecutions(request, datasetId))[0]?.status, { timeout: 30_000 }).toBe("failed");
    const [failedRun] = await latestExecutions(request, datasetId);

    await request.post(`${judge}/reset`);
    await failed.getByRole("button").click();
    await expect(row.locator('[data-testid=grid-cell][data-state="completed"]')).toBeVisible();
    const [retried] = await latestExecutions(request, datasetId);
    expect(retried.meta.model).toBe(model);

    // The failed run's page lists the error.
    await page.goto(`/executions/${failedRun.id}`);
    await expect(page.getByRole("table", { name: "Errors" }).getByTestId("execution-error")).toContainText("model refused the request");
    await expect(page.getByRole("table", { name: "Individual results" }).getByTestId("result-row")).toHaveAttribute("data-status", "failed");
  });

  // @store-independent: escaping is the page's; that content comes back byte for byte from either store is the import route tests.
  test("renders markup in conversation content as text", { tag: "@store-independent" }, async ({ page, request }) => {
    const datasetId = await importFixture(request, "xss-dataset.json", `XSS ${Date.now()}`);
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`/datasets/${datasetId}`);
    const grid = page.getByRole("table", { name: "Evaluation grid" });
    const row = grid.getByTestId("grid-row").first();
    await expect(row).toContainText("Markup in content <b>bold?</b>");
    await row.getByRole("button", { name: /^Expand/ }).click();
    await expect(grid.locator('[data-testid=grid-row][data-level="message"]')).toContainText("<img src=x onerror=alert(1)>");

    await row.getByRole("button", { name: /^Open Markup/ }).click();
    const panel = page.getByRole("complementary", { name: "Conversation" });
    await expect(panel.getByTestId("message-content").first()).toHaveText("<img src=x onerror=alert(1)>");
    await expect(panel.getByText("<script>alert('thinking')</script>")).toBeVisible();
    await expect(panel).toContainText('<a href="javascript:alert(4)">click</a>');
    await expect(panel).toContainText("<svg onload=alert(3)></svg>");
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await page.locator("svg[onload]").count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    await shot(page, { path: "test-results/screenshots/xss-as-text.png" });
    expect(dialogs).toEqual([]);
  });

  // @store-independent: the judge's settings and a call to it; nothing stored.
  test("settings show the judge configuration and test the connection", { tag: "@store-independent" }, async ({ page }) => {
    await page.goto("/");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
    await expect(page.getByRole("heading", { name: "Settings", level: 1 })).toBeVisible();
    await expect(page.getByTestId("judge-base-url")).toHaveText(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    await expect(page.getByTestId("judge-default-model")).not.toBeEmpty();
    await expect(page.getByText("set (never shown)")).toBeVisible();
    await expect(page.locator("body")).not.toContainText("test-key-for-the-judge-double");
    await page.getByRole("button", { name: "Test connection" }).click();
    await expect(page.getByTestId("connection-result")).toContainText("Connected");
    await shot(page, { path: "test-results/screenshots/settings.png", fullPage: true });
  });
});
