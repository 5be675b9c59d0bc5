/**
 * Issue 51, "numbers that mislead", in the browser (written for the suite; see the commit that added it):
 * the agreement page compares a score metric with pass/fail labels as pass/fail at the metric's threshold
 * and keeps the choice in the address; the tool-error check fails an "Error: …" text result in the grid.
 */
import { expect, test } from "@playwright/test";
import { judge, runCompleted, shot } from "./workspace-helpers";

async function importJson(request: import("@playwright/test").APIRequestContext, name: string, data: unknown): Promise<number> {
  const imported = await request.post("/api/datasets/import", {
    multipart: { file: { name: `${name}.json`, mimeType: "application/json", buffer: Buffer.from(JSON.stringify(data)) }, name: `${name} ${Date.now()}` },
  });
  expect(imported.status(), await imported.text()).toBe(201);
  return ((await imported.json()) as { dataset_id: number }).dataset_id;
}

// @store-independent: what is compared and how is app/api/agreement/pass-fail-labels.test.ts on both stores; this checks the page shows it and keeps it in the address.
test("a score metric against pass/fail labels: compared as pass/fail at 0.5, the choice kept in the address", { tag: "@store-independent" }, async ({ page, request }) => {
  await request.post(`${judge}/reset`);
  const datasetId = await importJson(request, "Labelled pass/fail", {
    conversations: Array.from({ length: 10 }, (_, i) => ({ name: `Case ${i + 1}`, messages: [{ role: "user", content: `Question ${i + 1}?` }, { role: "assistant", content: "An answer." }] })),
  });
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: datasetId, name: "Helpful", evaluation_level: "conversation", prompt: "How helpful was the assistant? @HISTORY", output_type: "progress" },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  const metricId = ((await metric.json()) as { id: number }).id;
  const run = await request.post("/api/evaluation-pipeline-executions/run", { data: { dataset_id: datasetId, pipeline_node_id: metricId } });
  await runCompleted(request, ((await run.json()) as { id: number }).id);
  // Labelled as the review queue's pass/fail keys store them: 1 for the first six, 0 for the rest.
  const convs = (await (await request.get(`/api/datasets/${datasetId}/conversations?limit=50`)).json()) as Array<{ id: number }>;
  for (const [i, c] of convs.entries()) {
    const label = await request.post("/api/labels", { data: { dataset_id: datasetId, pipeline_node_id: metricId, entity_type: "conversation", entity_id: c.id, value: i < 6 ? 1 : 0 } });
    expect(label.status(), await label.text()).toBe(201);
  }

  await page.goto(`/datasets/${datasetId}/agreement?metric=${metricId}`);
  await page.getByRole("combobox", { name: "Source B (truth)" }).selectOption("labels");
  // The judge double's 0.80 passes all ten at 0.5; people passed six.
  await expect(page.getByTestId("agreement-accuracy")).toHaveText("0.600");
  await expect(page.getByRole("combobox", { name: "Compare scores" })).toHaveValue("passfail");
  await expect(page.getByText("pass at score ≥ 0.5")).toBeVisible();
  await expect(page.getByTestId("confusion-false-pass")).toContainText("4");
  await expect(page).toHaveURL(/b=labels/);
  await shot(page, { path: "test-results/screenshots/first-day-agreement-passfail.png", fullPage: true });

  // Asked as scores: kept in the address, and a reload shows the same comparison.
  await page.getByRole("combobox", { name: "Compare scores" }).selectOption("scores");
  await expect(page.getByTestId("agreement-accuracy")).toHaveText("0.000");
  await expect(page).toHaveURL(/compare=scores/);
  await page.reload();
  await expect(page.getByRole("combobox", { name: "Compare scores" })).toHaveValue("scores");
  await expect(page.getByRole("combobox", { name: "Source B (truth)" })).toHaveValue("labels");
  await expect(page.getByTestId("agreement-accuracy")).toHaveText("0.000");
  await shot(page, { path: "test-results/screenshots/first-day-agreement-scores-kept.png", fullPage: true });
});

// @store-independent: the check's verdicts are app/api/evaluation-pipeline-executions/run/tool-error.test.ts on both stores; this shows the reasoning in the grid.
test("the tool-error check fails a text result that starts 'Error:', its reason shown", { tag: "@store-independent" }, async ({ page, request }) => {
  const datasetId = await importJson(request, "Airline tool errors", {
    conversations: [
      {
        name: "Payment",
        messages: [
          { role: "user", content: "Pay for my booking." },
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "book_reservation", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "c1", name: "book_reservation", content: "Error: payment amount does not add up, total price is 305, but paid 255" },
          { role: "assistant", content: "Booked." },
        ],
      },
    ],
  });
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: datasetId, name: "No tool errors", kind: "check", evaluation_level: "conversation", check: { type: "tool_error", params: {} } },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  const run = await request.post("/api/evaluation-pipeline-executions/run", { data: { dataset_id: datasetId } });
  const runId = ((await run.json()) as { id: number }).id;
  await runCompleted(request, runId);
  await page.goto(`/executions/${runId}`);
  await expect(page.getByText(/payment amount does not add up/).first()).toBeVisible();
  await expect(page.getByText(/pass rate/i).first()).toBeVisible();
  await shot(page, { path: "test-results/screenshots/first-day-tool-error-run.png", fullPage: true });
});

// @store-independent: what the alignment stores and refuses is app/api/alignments/rewrite-variables.test.ts on both stores; this shows the page offers no Promote for it.
test("a rewritten rubric that lost @HISTORY and @GOAL is no candidate; with the reward as truth no annotator warning", { tag: "@store-independent" }, async ({ page, request }) => {
  await request.post(`${judge}/reset`);
  await request.post(`${judge}/rules`, { data: { match: "You improve the rubric", behaviour: { kind: "verdict", body: { rubric: "Resolved means the refund went through." } } } });
  const datasetId = await importJson(request, "Rewrite keeps variables", {
    conversations: Array.from({ length: 12 }, (_, i) => ({
      name: `Refund ${i + 1}`,
      meta: { reward: i % 2 === 0 ? 1 : 0 },
      messages: [{ role: "user", content: `Where is refund ${i + 1}?` }, { role: "assistant", content: i % 2 === 0 ? "Refund approved." : "Unable to locate it." }],
    })),
  });
  const created = await request.post("/api/evaluation-pipeline-nodes", {
    data: {
      dataset_id: datasetId,
      name: "Resolved",
      evaluation_level: "conversation",
      prompt: "Goal: @GOAL\n\nWas the request resolved? @HISTORY",
      output_type: "checkbox",
      reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } },
    },
  });
  const metricId = ((await created.json()) as { id: number }).id;
  const convs = (await (await request.get(`/api/datasets/${datasetId}/conversations?limit=50`)).json()) as Array<{ id: number }>;
  // Two people who disagree on every cell: not the truth here, so not warned about.
  for (const [i, c] of convs.slice(0, 6).entries()) {
    for (const [user, value] of [["ann", i % 2 === 0], ["bob", i % 2 !== 0]] as const) {
      await request.post("/api/labels", { data: { dataset_id: datasetId, pipeline_node_id: metricId, entity_type: "conversation", entity_id: c.id, value }, headers: { "x-user-id": user } });
    }
  }
  const started = await request.post("/api/alignments", { data: { pipeline_node_id: metricId, truth: "reference", strategies: ["rewrite"], folds: 3 } });
  expect(started.status(), await started.text()).toBe(202);
  const alignmentId = ((await started.json()) as { id: number }).id;
  await expect.poll(async () => ((await (await request.get(`/api/alignments/${alignmentId}`)).json()) as { status: string }).status, { timeout: 60_000 }).toBe("completed");

  await page.goto(`/datasets/${datasetId}/agreement?metric=${metricId}`);
  // The metric's last alignment shows once the panel is opened.
  await page.getByTestId("align-panel").getByRole("button", { name: "Align this judge" }).click();
  const result = page.getByTestId("alignment-result");
  await expect(result).toHaveAttribute("data-status", "completed");
  await expect(result.getByTestId("align-row-rewrite").getByRole("button", { name: /Promote/ })).toHaveCount(0);
  await expect(result.getByTestId("align-row-rewrite").getByTestId("delta")).toContainText("no candidate: see why below");
  await expect(result.getByTestId("align-candidate-rewrite")).toContainText("lost @GOAL, @HISTORY, which the metric's prompt uses");
  await expect(result.getByTestId("align-annotators")).toHaveCount(0);
  await expect(result).not.toContainText("disagree with each other");
  await shot(page, { path: "test-results/screenshots/first-day-align-lost-variables.png", fullPage: true });
});
