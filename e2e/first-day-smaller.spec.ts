/**
 * Issue 51's smaller items in the browser: pairwise comparisons reachable from the dataset bar and added from
 * a template (not only from a column's ⋯ menu), the pairwise column's cells linking to them instead of "·",
 * a way back from a comparison's page and the comparisons listed; meta columns with no metric column side by
 * side (their headers stacked); labels made before any key ("default") shown on the People page and
 * explained where annotator κ counts them. Screenshots first-day-smaller-*.png.
 */
import { expect, test } from "@playwright/test";
import { chat, importConversations, judge, shot } from "./workspace-helpers";

// @store-independent: pages over the comparisons and templates APIs (app/api/comparisons/comparisons.test.ts, app/api/metric-templates/templates.test.ts on both stores).
test("pairwise from the dataset bar and a template; the column links to its comparisons; a way back from a comparison", { tag: "@store-independent" }, async ({ page, request }) => {
  test.setTimeout(120_000);
  await request.post(`${judge}/reset`);
  const stamp = Date.now();
  const source = await importConversations(request, `pairwise source ${stamp}`, [0, 1].map((i) => chat(i, `Open Orders, pick order ${i}, choose Refund.`)));
  const candidateName = `pairwise candidate ${stamp}`;
  await importConversations(request, candidateName, source.conversationIds.map((id, i) => chat(i, `Refunds exist. (${i})`, { source_conversation_id: id })));

  // The dataset bar leads to Compare replies; with no pairwise metric it offers the templates.
  await page.goto(`/datasets/${source.id}`);
  await page.getByRole("link", { name: "Compare replies" }).click();
  await expect(page.getByRole("heading", { name: "Compare replies" })).toBeVisible();
  await expect(page.getByTestId("no-pairwise-metric")).toBeVisible();
  await expect(page.getByTestId("dataset-comparisons")).toContainText("None yet");
  await shot(page, { path: "test-results/screenshots/first-day-smaller-pairwise-templates.png", fullPage: true });
  await page.getByRole("button", { name: "Add Better Reply (A or B)" }).click();
  await expect(page).toHaveURL(/\/pairwise\?metric=\d+$/);
  const metricId = Number(new URL(page.url()).searchParams.get("metric"));
  const metric = (await (await request.get(`/api/evaluation-pipeline-nodes/${metricId}`)).json()) as { output_type: string; dataset_id: number; evaluation_level: string };
  expect(metric).toMatchObject({ output_type: "pairwise", dataset_id: source.id, evaluation_level: "conversation" });
  await expect(page.getByLabel("Pairwise metric")).toHaveValue(String(metricId));

  await page.getByLabel(/This dataset against another/).check();
  await page.getByLabel("Other dataset (B)").selectOption({ label: `${candidateName} (2 conversations)` });
  await page.getByRole("button", { name: "Judge every pair in both orders" }).click();
  await expect(page).toHaveURL(/\/comparisons\/\d+$/);
  const comparisonId = Number(page.url().split("/").pop());
  await expect(page.getByTestId("pairs").locator("tbody tr")).toHaveCount(2, { timeout: 60_000 });
  // The page refreshes itself until both pairs are judged.
  await expect(page.getByTestId("pairs").locator("tbody")).not.toContainText("waiting", { timeout: 60_000 });
  await expect(page.getByTestId("comparison-back")).toHaveText(`← pairwise source ${stamp} · Compare replies`);
  await shot(page, { path: "test-results/screenshots/first-day-smaller-comparison-back.png", fullPage: true });

  // Back: the comparison is listed on the page, the metric still chosen.
  await page.getByTestId("comparison-back").click();
  await expect(page.getByRole("heading", { name: "Compare replies" })).toBeVisible();
  await expect(page.getByLabel("Pairwise metric")).toHaveValue(String(metricId));
  const listed = page.getByTestId("dataset-comparisons").locator(`[data-comparison="${comparisonId}"]`);
  await expect(listed).toContainText("Better Reply (A or B)");
  await expect(listed).toContainText(candidateName);
  await expect(listed).toContainText("of 2 pairs");
  await shot(page, { path: "test-results/screenshots/first-day-smaller-comparisons-listed.png", fullPage: true });

  // A message-level pairwise metric from the other template: on the conversation rows its column links to
  // the comparisons too (it showed "·" for good), as the conversation-level one does.
  const templates = (await (await request.get("/api/metric-templates")).json()) as Array<{ id: number; name: string; output_type: string }>;
  const messageTemplate = templates.find((t) => t.name === "Better Message Reply (A or B)");
  expect(messageTemplate?.output_type).toBe("pairwise");
  const added = await request.post("/api/evaluation-pipeline-nodes", { data: { dataset_id: source.id, template_id: messageTemplate!.id } });
  expect(added.status(), await added.text()).toBe(201);
  const messageMetricId = ((await added.json()) as { id: number }).id;
  await page.goto(`/datasets/${source.id}`);
  const grid = page.getByRole("table", { name: "Evaluation grid" });
  const pairCells = grid.locator('[data-testid=grid-cell][data-state="pairwise"]');
  await expect(pairCells).toHaveCount(4);
  await expect(pairCells.first()).toHaveText("in pairs →");
  await expect(grid.getByRole("row").nth(1).getByLabel("does not apply")).toHaveCount(0);
  await shot(page, { path: "test-results/screenshots/first-day-smaller-pairwise-column.png", fullPage: true });
  await grid.locator(`a[href$="/pairwise?metric=${messageMetricId}"]`).first().click();
  await expect(page).toHaveURL(new RegExp(`/datasets/${source.id}/pairwise\\?metric=${messageMetricId}$`));
  await expect(page.getByLabel("Pairwise metric")).toHaveValue(String(messageMetricId));
});

// @store-independent: the grid endpoint's meta columns are app/api/datasets/[id]/grid tests on both stores; this checks the header's layout.
test("meta columns with no metric column sit side by side, their headers in one row", { tag: "@store-independent" }, async ({ page, request }) => {
  const source = await importConversations(
    request,
    `meta only ${Date.now()}`,
    [0, 1, 2].map((i) => chat(i, "An answer.", { reward: i % 2, task: i % 2 ? "search" : "booking" })),
  );
  await page.goto(`/datasets/${source.id}?meta=reward,task`);
  const grid = page.getByRole("table", { name: "Evaluation grid" });
  const headers = grid.getByRole("columnheader");
  await expect(headers).toHaveCount(3);
  await expect(headers.nth(1)).toContainText("meta.reward");
  await expect(headers.nth(2)).toContainText("meta.task");
  const boxes = await Promise.all([0, 1, 2].map(async (i) => (await headers.nth(i).boundingBox())!));
  // One row: the same top and height, each column to the right of the one before.
  for (const i of [1, 2]) {
    expect(boxes[i].y).toBe(boxes[0].y);
    expect(boxes[i].height).toBe(boxes[0].height);
    expect(boxes[i].x).toBeGreaterThanOrEqual(boxes[i - 1].x + boxes[i - 1].width - 1);
  }
  await expect(grid.getByTestId("grid-row").first().locator('[data-testid=meta-cell][data-key="task"]')).toHaveText("booking");
  const cell = await grid.getByTestId("grid-row").first().locator('[data-testid=meta-cell][data-key="task"]').boundingBox();
  expect(Math.abs(cell!.x - boxes[2].x)).toBeLessThan(12);
  await shot(page, { path: "test-results/screenshots/first-day-smaller-meta-only.png", fullPage: true });
});

// @store-independent: what the answer says of each name is app/api/agreement/annotators/default-labels.test.ts on both stores; this checks the pages say it.
test("labels made before any key: 'default' on the People page, and explained where annotator κ counts them", { tag: "@store-independent" }, async ({ page, request }) => {
  const stamp = Date.now();
  const told = `cy${stamp}`;
  const source = await importConversations(request, `default labels ${stamp}`, [0, 1, 2, 3].map((i) => chat(i, "An answer.")));
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: source.id, name: "Solved", evaluation_level: "conversation", prompt: "Solved? @HISTORY", output_type: "checkbox" },
  });
  const metricId = ((await metric.json()) as { id: number }).id;
  for (const [i, id] of source.conversationIds.entries()) {
    // No key yet: the open server writes these as "default"; the second as the name it is told.
    for (const headers of [{}, { "x-user-id": told }] as Array<Record<string, string>>) {
      const res = await request.post("/api/labels", { data: { dataset_id: source.id, pipeline_node_id: metricId, entity_type: "conversation", entity_id: id, value: i < 2 }, headers });
      expect(res.status(), await res.text()).toBe(201);
    }
  }

  await page.goto(`/datasets/${source.id}/agreement?metric=${metricId}`);
  const panel = page.getByTestId("annotator-agreement");
  await expect(panel.locator('[data-user="default"]')).toHaveAttribute("data-who", "before_keys");
  await expect(panel.locator('[data-user="default"]')).toContainText("default (labels made before any key): 4 labelled");
  await expect(panel.locator(`[data-user="${told}"]`)).toContainText("(not on the People page)");
  await expect(panel.getByTestId("annotators-explained")).toContainText("κ counts them as one more annotator");
  await expect(panel.locator(`[data-pair="${told}|default"]`)).toContainText("4");
  await shot(page, { path: "test-results/screenshots/first-day-smaller-annotators-default.png", fullPage: true });

  await page.goto("/people");
  const authors = page.getByTestId("label-authors");
  await expect(authors.getByTestId("label-author-default")).toContainText("before any key");
  await expect(authors.getByTestId(`label-author-${told}`)).toContainText("4 current labels on 1 dataset");
  await shot(page, { path: "test-results/screenshots/first-day-smaller-people-default.png", fullPage: true });
});
