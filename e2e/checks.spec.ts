import { expect, test } from "@playwright/test";
import { importFixture, judge, shot } from "./workspace-helpers";

test.describe("check metrics", () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("adds a check from the library, edits its parameters (validated on save) and runs it from the grid without the judge", async ({ page, request }) => {
    const datasetId = await importFixture(request, "sample-dataset.json", `Checks ${Date.now()}`);
    await page.goto(`/datasets/${datasetId}/metrics/new`);
    await page.getByLabel("A template").check();
    await page.getByLabel("Template", { exact: true }).selectOption({ label: "Turns to First Answer (check)" });
    await expect(page.getByLabel("Name")).toHaveValue("Turns to First Answer (check)");
    await expect(page.getByLabel("Check", { exact: true })).toHaveValue("turns_to_first_answer");
    const params = page.getByLabel("Check parameters (JSON)");
    await expect(params).toHaveValue(/"max": 2/);
    // A check has no prompt to write.
    await expect(page.getByRole("combobox", { name: "Prompt" })).toHaveCount(0);

    // An invalid parameter is refused by the server with the reason, shown under the field.
    await params.fill('{"max": 0}');
    await page.getByRole("button", { name: "Add metric" }).click();
    await expect(page.getByText(/max .*(>=|at least|greater).*1/i)).toBeVisible();
    await params.fill('{"max": 1}');
    await page.getByRole("button", { name: "Add metric" }).click();
    await expect(page).toHaveURL(new RegExp(`/datasets/${datasetId}$`));

    const grid = page.getByRole("table", { name: "Evaluation grid" });
    await expect(grid.getByTestId("metric-header").filter({ hasText: "Turns to First Answer (check)" })).toBeVisible();
    await page.getByRole("button", { name: "Run all" }).click();
    const run = page.getByTestId("run-status").first();
    await expect(run).toHaveAttribute("data-status", "completed", { timeout: 30_000 });
    await expect(grid.locator('[data-testid=grid-cell][data-cell*=":conversation:"][data-state="completed"]')).toHaveCount(5);

    // The reasoning says what was checked.
    const lisbon = grid.getByTestId("grid-row").filter({ hasText: "Flight to Lisbon" });
    await lisbon.getByRole("button", { name: /Turns to First Answer \(check\) on Flight to Lisbon: show result/ }).click();
    await expect(page.getByRole("dialog")).toContainText(/First answer at assistant turn 1/);
    await shot(page, { path: "test-results/screenshots/check-metric.png" });

    // No cell reached the judge.
    // Judge calls, that is: the pages' one look at the judge's model list (is it the test double?) is no call.
    const { requests } = (await (await request.get(`${judge}/requests`)).json()) as { requests: Array<{ path: string }> };
    expect(requests.filter((r) => r.path !== "/v1/models")).toHaveLength(0);
  });

  test("sets a dependency and a skip rule in the metric form: a cycle is refused at the field, skipped cells are reported", async ({ page, request }) => {
    const datasetId = await importFixture(request, "sample-dataset.json", `Check deps ${Date.now()}`);
    // "Refund via handoff" answers with 7 steps in one message: the only message over this budget.
    const budget = await request.post("/api/evaluation-pipeline-nodes", {
      data: { dataset_id: datasetId, name: "Step budget", kind: "check", evaluation_level: "message", check: { type: "step_count", params: { max: 5 } } },
    });
    expect(budget.status()).toBe(201);
    const budgetId = ((await budget.json()) as { id: number }).id;

    await page.goto(`/datasets/${datasetId}/metrics/new`);
    await page.getByLabel("Scratch").check();
    await page.getByLabel("Name").fill("Gated steps");
    await page.getByLabel("Deterministic check (no judge call)").check();
    await page.getByLabel("Evaluation level").selectOption("message");
    await page.getByLabel("Check", { exact: true }).selectOption({ label: "Step count" });
    await page.getByLabel("Check parameters (JSON)").fill('{"max": 100}');
    // A skip rule without a dependency is refused before sending.
    await page.getByLabel("Skip rule").selectOption({ label: "Skip when a dependency failed" });
    await page.getByRole("button", { name: "Add metric" }).click();
    await expect(page.getByText("Choose at least one dependency for a skip rule")).toBeVisible();
    await page.getByRole("group", { name: "Depends on" }).getByLabel("Step budget").check();
    await page.getByRole("button", { name: "Add metric" }).click();
    await expect(page).toHaveURL(new RegExp(`/datasets/${datasetId}$`));

    const metrics = (await (await request.get(`/api/evaluation-pipeline-nodes?dataset_id=${datasetId}`)).json()) as Array<{ id: number; name: string; depends_on: number[]; skip_rule: unknown }>;
    const gated = metrics.find((m) => m.name === "Gated steps")!;
    expect(gated).toMatchObject({ depends_on: [budgetId], skip_rule: { when: "failed" } });

    // Making the budget depend on the gated metric would be a cycle: the server's 422 shows at the field.
    await page.goto(`/datasets/${datasetId}/metrics/${budgetId}`);
    await page.getByRole("group", { name: "Depends on" }).getByLabel("Gated steps").check();
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect(page.getByRole("group", { name: "Depends on" }).getByRole("alert")).toContainText(/cycle/);
    await expect(page).toHaveURL(new RegExp(`/metrics/${budgetId}$`));

    // The edit form shows the saved rule; "below a threshold" asks for the threshold.
    await page.goto(`/datasets/${datasetId}/metrics/${gated.id}`);
    await expect(page.getByRole("group", { name: "Depends on" }).getByLabel("Step budget")).toBeChecked();
    await expect(page.getByLabel("Skip rule")).toHaveValue("failed");
    await page.getByLabel("Skip rule").selectOption("below");
    await page.getByLabel("Threshold").fill("1");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect(page).toHaveURL(new RegExp(`/datasets/${datasetId}$`));
    const saved = (await (await request.get(`/api/evaluation-pipeline-nodes/${gated.id}`)).json()) as { skip_rule: unknown };
    expect(saved.skip_rule).toEqual({ when: "below", threshold: 1 });

    await page.getByRole("button", { name: "Run all" }).click();
    const run = page.getByTestId("run-status").first();
    await expect(run).toHaveAttribute("data-status", "completed", { timeout: 30_000 });
    // 9 budget cells + 9 gated cells; the one message over the budget (score 0 < 1) skips its gated cell.
    await expect(run).toContainText("17 succeeded, 0 failed, 1 skipped of 18");
    const grid = page.getByRole("table", { name: "Evaluation grid" });
    await grid.getByTestId("grid-row").filter({ hasText: "Refund via handoff" }).getByRole("button", { name: "Expand Refund via handoff" }).click();
    await expect(grid.locator('[data-testid=grid-row][data-level="message"] [data-testid=grid-cell][data-state="skipped"]')).toHaveCount(1);
    await expect(grid.getByLabel(/Gated steps on .*: skipped/)).toBeVisible();
    await shot(page, { path: "test-results/screenshots/check-dependency-skip.png" });
    // Judge calls, that is: the pages' one look at the judge's model list (is it the test double?) is no call.
    const { requests } = (await (await request.get(`${judge}/requests`)).json()) as { requests: Array<{ path: string }> };
    expect(requests.filter((r) => r.path !== "/v1/models")).toHaveLength(0);
  });
});
