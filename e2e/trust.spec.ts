/** Judge trust in the browser: the review queue from the keyboard, agreement that follows the labels, a false pass opened in the grid. */
import { expect, test, type APIRequestContext } from "@playwright/test";
import { judge, runCompleted } from "./workspace-helpers";

/** Twelve agent trajectories with a ground-truth reward; the judge double fails those whose text carries a fail marker. */
const rewards = [1, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1, 1];
const judgeFails = new Set([2, 4, 7, 9]);
// So: false passes (judge pass, reward 0) at 3 and 5; a false fail (judge fail, reward 1) at 2.
const verdictMarker = (pass: boolean) => `[[judge-double:verdict {"value":${pass},"reasoning":"${pass ? "The task was solved." : "The agent gave up."}"}]]`;

function trajectories(): string {
  return JSON.stringify({
    conversations: rewards.map((reward, i) => ({
      name: `Trajectory ${String(i + 1).padStart(2, "0")}`,
      meta: { reward, task: i % 2 ? "search" : "booking" },
      messages: [
        { role: "user", content: `Task ${i + 1}: book the cheapest flight. ${verdictMarker(!judgeFails.has(i))}` },
        { role: "assistant", content: `Done with task ${i + 1}.` },
      ],
    })),
  });
}

async function runAndWait(request: APIRequestContext, datasetId: number, metricId: number, model: string): Promise<number> {
  const run = await request.post("/api/evaluation-pipeline-executions/run", { data: { dataset_id: datasetId, pipeline_node_id: metricId, model_name: model } });
  expect(run.status(), await run.text()).toBe(202);
  const executionId = ((await run.json()) as { id: number }).id;
  await runCompleted(request, executionId);
  return executionId;
}

async function setUp(request: APIRequestContext) {
  const created = await request.post("/api/datasets", { data: { name: `Trust ${Date.now()}` } });
  expect(created.status()).toBe(201);
  const datasetId = ((await created.json()) as { id: number }).id;
  const imported = await request.post(`/api/datasets/${datasetId}/import`, {
    multipart: { file: { name: "trajectories.json", mimeType: "application/json", buffer: Buffer.from(trajectories()) }, get_feedback: "false" },
  });
  expect(imported.status(), await imported.text()).toBe(200);
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: {
      dataset_id: datasetId,
      name: "Task solved",
      evaluation_level: "conversation",
      prompt: "Did the agent solve the task? @HISTORY",
      output_type: "checkbox",
      reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } },
    },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  const metricId = ((await metric.json()) as { id: number }).id;
  const executionId = await runAndWait(request, datasetId, metricId, "judge-alpha");
  return { datasetId, metricId, executionId };
}

test.describe("judge trust", () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("labels ten cells from the queue with the keyboard only, sees agreement follow, and opens a false pass in the grid", async ({ page, request }) => {
    const { datasetId, metricId } = await setUp(request);

    // Agreement between the grid and the labels: nothing labelled yet.
    await page.goto(`/datasets/${datasetId}/agreement?metric=${metricId}`);
    await page.getByLabel("Source B (truth)").selectOption("labels");
    await expect(page.getByTestId("agreement-n")).toHaveText("0");

    // The queue: the workspace links to it; from there on, only keys.
    await page.goto(`/datasets/${datasetId}`);
    await page.getByRole("link", { name: "Review queue" }).click();
    await expect(page.getByRole("heading", { name: "Review queue", level: 1 })).toBeVisible();
    await expect(page.getByTestId("review-title")).toHaveText("Trajectory 01");
    await expect(page.getByTestId("review-verdict")).toHaveText("pass");
    await expect(page.getByTestId("review-reasoning")).toHaveText("The task was solved.");
    await expect(page.getByTestId("review-cell").getByText("Task 1: book the cheapest flight.", { exact: false })).toBeVisible();

    // The judge here is the test double: every page says so (issue 51).
    await expect(page.getByTestId("judge-double-banner")).toContainText("The judge is a test double, not a model.");
    // The conversation's name is in view when the queue opens, above the transcript scrolled to what was judged.
    await expect(page.getByTestId("review-title")).toBeInViewport();
    await page.keyboard.press("?");
    await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toContainText("next / previous cell");
    await page.keyboard.press("?");
    await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeHidden();
    // Esc closes it too.
    await page.keyboard.press("?");
    await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeVisible();
    await page.keyboard.press("Escape");
    await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeHidden();

    // j/k move without labelling.
    await page.keyboard.press("j");
    await expect(page.getByTestId("review-title")).toHaveText("Trajectory 02");
    await page.keyboard.press("k");
    await expect(page.getByTestId("review-title")).toHaveText("Trajectory 01");

    // Label the first ten with the truth (the reward): p for pass, f for fail; each label moves on.
    for (let i = 0; i < 10; i++) {
      await expect(page.getByTestId("review-title")).toHaveText(`Trajectory ${String(i + 1).padStart(2, "0")}`);
      await page.keyboard.press(rewards[i] === 1 ? "p" : "f");
      await expect(page.getByTestId("review-labelled")).toHaveText(String(i + 1));
    }
    await expect(page.getByTestId("review-title")).toHaveText("Trajectory 11");
    await expect(page.getByTestId("review-progress")).toContainText("Cell 11 of 12");

    // A note on the previous cell, from the keyboard.
    await page.keyboard.press("k");
    await expect(page.getByTestId("review-title")).toHaveText("Trajectory 10");
    await expect(page.getByTestId("review-label")).toHaveText("fail");
    await page.keyboard.press("n");
    await page.keyboard.type("Reward says fail too.");
    await page.keyboard.press("Enter");
    await expect(page.getByRole("status")).toContainText("with note");

    // Unlabelled only: the two left.
    await page.getByLabel("Unlabelled only").check();
    await expect(page.getByTestId("review-progress")).toContainText("of 2");

    const labels = (await (await request.get(`/api/labels?dataset_id=${datasetId}&pipeline_node_id=${metricId}`)).json()) as Array<{ value: boolean; note: string | null }>;
    expect(labels).toHaveLength(10);
    expect(labels.filter((l) => l.note === "Reward says fail too.")).toHaveLength(1);

    // Agreement now counts the ten labels: judge vs labels disagree on 2 (false fail), 3 and 5 (false passes).
    await page.getByRole("link", { name: "Agreement →" }).click();
    await page.getByLabel("Source B (truth)").selectOption("labels");
    await expect(page.getByTestId("agreement-n")).toHaveText("10");
    await expect(page.getByTestId("agreement-accuracy")).toHaveText("0.700");
    await expect(page.getByTestId("agreement-chart")).toBeVisible();

    // Against the reward itself (12 cells): two false passes, listed; one opens in the grid.
    await page.getByLabel("Source B (truth)").selectOption("reference");
    await expect(page.getByTestId("agreement-n")).toHaveText("12");
    const falsePass = page.getByTestId("confusion-false-pass");
    await expect(falsePass.getByRole("link")).toHaveCount(2);
    await expect(page.getByTestId("confusion-false-fail").getByRole("link")).toHaveCount(1);
    await falsePass.getByRole("link").first().click();
    await expect(page.getByTestId("conversation-panel")).toBeVisible();
    await expect(page.getByTestId("conversation-panel").getByRole("heading", { name: "Trajectory 04" })).toBeVisible();
    const grid = page.getByRole("table", { name: "Evaluation grid" });
    await expect(grid).toBeVisible();
    await page.keyboard.press("Escape");

    // The same false passes straight in the grid: the reward as a column, filtered with the judge's verdict.
    await page.getByLabel("Meta columns").fill("reward,task");
    await page.getByLabel("Filter rows").fill(`meta.reward==0;metric.${metricId}==pass`);
    await page.getByLabel("Sort rows").fill("-meta.reward");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(grid.getByTestId("grid-row")).toHaveCount(2);
    // Equal rewards keep grid order.
    await expect(grid.getByTestId("grid-row").nth(0)).toContainText("Trajectory 04");
    await expect(grid.getByTestId("grid-row").nth(1)).toContainText("Trajectory 06");
    await expect(grid.getByTestId("grid-row").nth(0).locator('[data-testid=meta-cell][data-key="reward"]')).toHaveText("0");
    await expect(grid.getByTestId("grid-row").nth(0).locator('[data-testid=meta-cell][data-key="task"]')).toHaveText("search");
    await page.getByRole("button", { name: "Clear" }).click();
    await expect(grid.getByTestId("grid-row")).toHaveCount(12);
  });

  // @store-independent: the page's queue of saves under a slow network; what a label save stores (a relabel supersedes, history kept)
  // is app/api/labels/labels.test.ts on both stores.
  test("labels as fast as the keys come: each press labels the next cell, however slow the save", { tag: "@store-independent" }, async ({ page, request }) => {
    const { datasetId, metricId } = await setUp(request);
    // Every label save takes 400 ms, the first 1,500 ms: the keys below come faster than that.
    let posts = 0;
    await page.route("**/api/labels", async (route) => {
      if (route.request().method() === "POST") await new Promise((r) => setTimeout(r, posts++ === 0 ? 1_500 : 400));
      await route.continue();
    });
    await page.goto(`/datasets/${datasetId}/review?metric=${metricId}`);
    await expect(page.getByTestId("review-title")).toHaveText("Trajectory 01");
    for (const key of ["p", "f", "p", "f", "p"]) await page.keyboard.press(key);
    await expect(page.getByTestId("review-title")).toHaveText("Trajectory 06");
    await expect(page.getByTestId("review-labelled")).toHaveText("5");
    const labels = (await (await request.get(`/api/labels?dataset_id=${datasetId}&pipeline_node_id=${metricId}`)).json()) as Array<{ entity_id: number; value: boolean }>;
    expect(labels).toHaveLength(5);
    expect(new Set(labels.map((l) => l.entity_id)).size).toBe(5);
    expect(labels.filter((l) => l.value)).toHaveLength(3);
  });

  // @store-independent: as above — which answer the page shows when saves land out of order.
  test("a slow save that lands after a later one does not overwrite what the later one said", { tag: "@store-independent" }, async ({ page, request }) => {
    const { datasetId, metricId } = await setUp(request);
    let posts = 0;
    await page.route("**/api/labels", async (route) => {
      if (route.request().method() === "POST") await new Promise((r) => setTimeout(r, posts++ === 0 ? 1_500 : 0));
      await route.continue();
    });
    await page.goto(`/datasets/${datasetId}/review?metric=${metricId}`);
    await expect(page.getByTestId("review-title")).toHaveText("Trajectory 01");
    await page.keyboard.press("f"); // its save takes 1.5 s
    await expect(page.getByTestId("review-title")).toHaveText("Trajectory 02");
    await page.keyboard.press("n");
    await page.keyboard.type("Looks right.");
    await page.keyboard.press("Enter");
    await expect(page.getByRole("status")).toContainText("with note for Trajectory 02");
    // Both saves landed (the slow one after the note's): the status still speaks of the latest.
    await expect.poll(async () => ((await (await request.get(`/api/labels?dataset_id=${datasetId}&pipeline_node_id=${metricId}`)).json()) as unknown[]).length).toBe(2);
    await expect(page.getByTestId("review-labelled")).toHaveText("1");
    await expect(page.getByRole("status")).toContainText("with note for Trajectory 02");
  });

  test("compares two runs of the same metric under two judge models", async ({ page, request }) => {
    const { datasetId, metricId, executionId: alpha } = await setUp(request);
    // The second model sees trajectory 1 differently.
    const rule = await request.post(`${judge}/rules`, {
      data: { match: { regex: "Task 1: " }, behaviour: { kind: "verdict", body: { value: false, reasoning: "Beta disagrees." } } },
    });
    expect(rule.ok()).toBe(true);
    const beta = await runAndWait(request, datasetId, metricId, "judge-beta");

    await page.goto(`/datasets/${datasetId}`);
    await page.getByRole("link", { name: "Compare runs" }).click();
    await expect(page.getByRole("heading", { name: "Compare two runs", level: 1 })).toBeVisible();
    await expect(page.getByLabel("Run A")).toHaveValue(String(alpha));
    await expect(page.getByLabel("Run B")).toHaveValue(String(beta));
    await expect(page.getByTestId("compare-models-a")).toHaveText("judge-alpha");
    await expect(page.getByTestId("compare-models-b")).toHaveText("judge-beta");
    const row = page.getByTestId("compare-metrics").locator(`[data-metric="${metricId}"]`);
    await expect(row.getByTestId("compare-changed")).toContainText("model");
    await expect(row.getByTestId("compare-changed")).toContainText("judge-alpha → judge-beta");
    await expect(row.getByTestId("compare-flips")).toHaveText("1");
    await expect(page.getByTestId("compare-cell")).toHaveCount(12);
    await page.getByLabel("Only flips").check();
    await expect(page.getByTestId("compare-cell")).toHaveCount(1);
    await expect(page.getByTestId("compare-cell")).toContainText("pass");
    await expect(page.getByTestId("compare-cell")).toContainText("fail");
    // The cell is named as the grid names its conversation, not by an id.
    await expect(page.getByTestId("compare-cell").getByRole("link")).toHaveText("Trajectory 01");
    // The choices live in the address: a reload (or a shared link) shows the same comparison.
    const url = new URL(page.url());
    expect([url.searchParams.get("a"), url.searchParams.get("b"), url.searchParams.get("flips")]).toEqual([String(alpha), String(beta), "1"]);
    await page.reload();
    await expect(page.getByLabel("Only flips")).toBeChecked();
    await expect(page.getByTestId("compare-cell")).toHaveCount(1);
  });
});
