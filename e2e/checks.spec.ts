import { expect, test } from "@playwright/test";
import { importFixture, judge } from "./workspace-helpers";

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
    await page.screenshot({ path: "test-results/screenshots/check-metric.png" });

    // No cell reached the judge.
    const { requests } = (await (await request.get(`${judge}/requests`)).json()) as { requests: unknown[] };
    expect(requests).toHaveLength(0);
  });
});
