/**
 * Issue 38.5: a pairwise comparison's page — win/tie/loss with the win rate's interval, consistency, the
 * judge's position bias, and every pair with both verdicts. Two runs of the same pairs: a judge that
 * prefers one reply wherever it is shown (consistent wins), and one that always picks the reply shown
 * first (every pair a tie, first position 100%).
 */
import { expect, test, type APIRequestContext } from "@playwright/test";
import { chat, importConversations, judge, shot } from "./workspace-helpers";

async function compare(request: APIRequestContext, body: Record<string, unknown>): Promise<number> {
  const res = await request.post("/api/comparisons", { data: body });
  expect(res.status(), await res.text()).toBe(202);
  const id = ((await res.json()) as { id: number }).id;
  await expect.poll(async () => ((await (await request.get(`/api/comparisons/${id}`)).json()) as { status: string }).status, { timeout: 60_000 }).toBe("completed");
  return id;
}

// @store-independent: pages over the comparisons API, whose storing app/api/comparisons/comparisons.test.ts runs on both stores.
test("a comparison's page: wins with their interval, consistency, position bias and both verdicts of each pair", { tag: "@store-independent" }, async ({ page, request }) => {
  test.setTimeout(120_000);
  await request.post(`${judge}/reset`);
  const stamp = Date.now();
  const source = await importConversations(request, `support replies ${stamp}`, [0, 1, 2, 3].map((i) => chat(i, `Open Orders, pick order ${i}, choose Refund: the money is back in 5 days. (CLEAR)`)));
  const candidate = await importConversations(
    request,
    `candidate replies ${stamp}`,
    source.conversationIds.map((id, i) => chat(i, `Refunds are possible. (VAGUE ${i})`, { source_conversation_id: id, repeat: 0 })),
  );
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: source.id, name: "More helpful reply", evaluation_level: "conversation", output_type: "pairwise", prompt: "Which reply helps the user with @LAST_USER_MSG more?\nReply A: @CANDIDATE_A\nReply B: @CANDIDATE_B" },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  const metricId = ((await metric.json()) as { id: number }).id;

  // The judge prefers the CLEAR reply in whichever place it is shown.
  for (const [place, winner] of [["A", "A"], ["B", "B"]]) {
    const rule = await request.post(`${judge}/rules`, {
      data: { match: { regex: `name="@CANDIDATE_${place}">[^<]*CLEAR` }, behaviour: { kind: "verdict", body: { winner, reasoning: `Reply ${winner} gives the steps to a refund.` } } },
    });
    expect(rule.status(), await rule.text()).toBeLessThan(300);
  }
  const preferring = await compare(request, { pipeline_node_id: metricId, a: `dataset:${source.id}`, b: `dataset:${candidate.id}`, pair_by: "source_conversation" });
  await page.goto(`/comparisons/${preferring}`);
  await expect(page.getByRole("heading", { name: `Comparison #${preferring}` })).toBeVisible();
  await expect(page.getByTestId("wins-a")).toContainText("4");
  await expect(page.getByTestId("ties")).toContainText("0");
  await expect(page.getByTestId("wins-b")).toContainText("0");
  // 4 of 4: Wilson [4/(4 + 1.96²), 1] = [51%, 100%].
  await expect(page.getByTestId("win-rate")).toContainText("100%");
  await expect(page.getByTestId("win-rate")).toContainText("95% CI 51%–100%");
  await expect(page.getByTestId("consistency")).toContainText("100%");
  await expect(page.getByTestId("position-bias")).toContainText("50%");
  const rows = page.getByTestId("pairs").locator("tbody tr");
  await expect(rows).toHaveCount(4);
  await expect(rows.first()).toContainText("Refund question 0");
  await expect(rows.first()).toContainText("a wins");
  // Each verdict says who won under a header naming the order; token counts are grouped (issue 51).
  await expect(page.getByTestId("pairs").locator("thead")).toContainText("verdict, a shown first");
  await expect(rows.first().locator("td").nth(2)).toContainText("a wins");
  await expect(rows.first()).toContainText("Reply A gives the steps to a refund.");
  await expect(rows.first()).toContainText("Reply B gives the steps to a refund.");
  await shot(page, { path: "test-results/screenshots/comparison-consistent.png", fullPage: true });

  // A judge that always picks the reply shown first: each pair flips with the order, so every pair is a tie.
  await request.post(`${judge}/reset`);
  const biased = await compare(request, { pipeline_node_id: metricId, a: `dataset:${candidate.id}`, b: `dataset:${source.id}`, pair_by: "source_conversation", no_cache: true });
  await page.goto(`/comparisons/${biased}`);
  await expect(page.getByTestId("ties")).toContainText("4");
  await expect(page.getByTestId("win-rate")).toContainText("50%");
  await expect(page.getByTestId("consistency")).toContainText("0%");
  await expect(page.getByTestId("position-bias")).toContainText("100%");
  await expect(page.getByTestId("position-bias")).toContainText("position bias: the judge favours the reply shown first");
  await expect(page.getByTestId("pairs").locator("tbody tr").first()).toContainText("tie");
  await shot(page, { path: "test-results/screenshots/comparison-position-bias.png", fullPage: true });

  expect((await page.goto("/comparisons/999999"))?.status()).toBe(404);
});

// @store-independent: as above (the grid column menu and the start page).
test("a pairwise column is judged in pairs: its menu starts a comparison against another dataset, and its page follows it", { tag: "@store-independent" }, async ({ page, request }) => {
  test.setTimeout(120_000);
  await request.post(`${judge}/reset`);
  const stamp = Date.now();
  const source = await importConversations(request, `grid source ${stamp}`, [0, 1].map((i) => chat(i, `Open Orders, pick order ${i}, choose Refund. (CLEAR)`)));
  const candidateName = `grid candidate ${stamp}`;
  await importConversations(request, candidateName, source.conversationIds.map((id, i) => chat(i, `Refunds exist. (VAGUE ${i})`, { source_conversation_id: id })));
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: source.id, name: "Better reply", evaluation_level: "conversation", output_type: "pairwise", prompt: "Which reply is better?\nReply A: @CANDIDATE_A\nReply B: @CANDIDATE_B" },
  });
  expect(metric.status(), await metric.text()).toBe(201);

  await page.goto(`/datasets/${source.id}`);
  const grid = page.getByRole("table", { name: "Evaluation grid" });
  // No cell offers a run of its own: the metric compares two replies.
  await expect(grid.locator('[data-testid=grid-cell][data-state="pairwise"]')).toHaveCount(2);
  await grid.getByRole("button", { name: "Better reply column actions" }).click();
  await expect(page.getByRole("menuitem", { name: "▶ Run column" })).toHaveCount(0);
  await page.getByRole("menuitem", { name: /Compare replies/ }).click();
  await expect(page.getByRole("heading", { name: "Compare replies" })).toBeVisible();
  await expect(page.getByLabel("Pairwise metric")).toHaveValue(String(((await metric.json()) as { id: number }).id));
  await page.getByLabel(/This dataset against another/).check();
  await page.getByLabel("Other dataset (B)").selectOption({ label: `${candidateName} (2 conversations)` });
  await page.getByRole("button", { name: "Judge every pair in both orders" }).click();
  await expect(page).toHaveURL(/\/comparisons\/\d+$/);
  // The page refreshes itself while the pairs are judged; both pairs end judged.
  await expect(page.getByTestId("pairs").locator("tbody tr")).toHaveCount(2, { timeout: 60_000 });
  await expect(page.getByTestId("ties").or(page.getByTestId("wins-a"))).not.toHaveCount(0);
  await shot(page, { path: "test-results/screenshots/comparison-from-grid.png", fullPage: true });
});
