/**
 * Issue 51 in the browser (written for the suite, not run by the change that added it): generated
 * conversations are named '<source name> · repeat k' and listed in source order in the grid; the runs of
 * "Evaluate and compare" say what made them in History and on the run page, and comparing again reads the
 * source's finished run instead of judging it again; the run page of a pass/fail metric shows its pass rate.
 */
import { expect, test } from "@playwright/test";
import { judge, runCompleted, shot } from "./workspace-helpers";

const targetUrl = `http://127.0.0.1:${process.env.E2E_JUDGE_PORT ?? 4010}/v1`;

test("generated conversations keep their source's name in source order; runs say what made them; pass rate on the run page", async ({ page, request }) => {
  test.setTimeout(120_000);
  await request.post(`${judge}/reset`);
  await request.post(`${judge}/default`, { data: { kind: "text", content: "Your order is booked." } });
  const file = JSON.stringify({
    conversations: ["Refund", "Rebooking", "Lost bag"].map((name) => ({ name, messages: [{ role: "user", content: `${name}, please.` }, { role: "assistant", content: "Sorry, I cannot." }] })),
  });
  const imported = await request.post("/api/datasets/import", { multipart: { file: { name: "orders.json", mimeType: "application/json", buffer: Buffer.from(file) }, name: `Names ${Date.now()}` } });
  expect(imported.status(), await imported.text()).toBe(201);
  const sourceId = ((await imported.json()) as { dataset_id: number }).dataset_id;
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: sourceId, name: "booked", kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value: "booked" } } },
  });
  const metricId = ((await metric.json()) as { id: number }).id;
  const target = await request.post("/api/targets", { data: { name: `Names agent ${Date.now()}`, kind: "openai_chat", url: targetUrl, model: "candidate-model" } });
  const targetId = ((await target.json()) as { id: number }).id;
  const started = await request.post("/api/generations", { data: { source_dataset_id: sourceId, target_id: targetId, mode: "replay", repeats: 2 } });
  expect(started.status(), await started.text()).toBe(202);
  const generationId = ((await started.json()) as { id: number }).id;
  await expect.poll(async () => ((await (await request.get(`/api/generations/${generationId}`)).json()) as { status: string }).status, { timeout: 60_000 }).toBe("completed");
  const generatedId = ((await (await request.get(`/api/generations/${generationId}`)).json()) as { dataset_id: number }).dataset_id;

  // The grid of the generated dataset: by source, each source's repeats in turn.
  await page.goto(`/datasets/${generatedId}`);
  const names = ["Refund · repeat 1", "Refund · repeat 2", "Rebooking · repeat 1", "Rebooking · repeat 2", "Lost bag · repeat 1", "Lost bag · repeat 2"];
  for (const name of names) await expect(page.getByText(name, { exact: true }).first()).toBeVisible();
  const listed = (await (await request.get(`/api/datasets/${generatedId}/conversations?limit=50`)).json()) as Array<{ name: string }>;
  expect(listed.map((c) => c.name)).toEqual(names);
  await shot(page, { path: "test-results/screenshots/first-day-generated-names.png", fullPage: true });

  // Evaluate and compare, twice: the second reads the source's finished run.
  const first = await request.post(`/api/generations/${generationId}/evaluate`, { data: { pipeline_node_ids: [metricId] } });
  const a = (await first.json()) as { source_execution: { id: number }; generated_execution: { id: number }; source_reused: boolean };
  expect(a.source_reused).toBe(false);
  await runCompleted(request, a.source_execution.id);
  await runCompleted(request, a.generated_execution.id);
  const again = (await (await request.post(`/api/generations/${generationId}/evaluate`, { data: { pipeline_node_ids: [metricId] } })).json()) as typeof a;
  expect(again.source_reused).toBe(true);
  expect(again.source_execution.id).toBe(a.source_execution.id);
  await runCompleted(request, again.generated_execution.id);

  await page.goto(`/datasets/${sourceId}/executions`);
  const row = page.locator(`[data-execution="${a.source_execution.id}"]`);
  await expect(row.getByTestId("run-made-by")).toHaveText(`made by Evaluate and compare · generation ${generationId}`);
  await expect(row).toContainText("booked");
  await expect(row).not.toContainText("All metrics");
  await shot(page, { path: "test-results/screenshots/first-day-history-made-by.png", fullPage: true });

  await page.goto(`/executions/${a.generated_execution.id}`);
  await expect(page.getByTestId("run-made-by")).toContainText(`Evaluate and compare · generation ${generationId}`);
  const card = page.getByTestId("aggregate-card").first();
  await expect(card.getByTestId("aggregate-pass-rate")).toContainText("Pass rate");
  await expect(card.getByTestId("aggregate-pass-rate")).toContainText("100.0%");
  await expect(card).not.toContainText("Average");
  await shot(page, { path: "test-results/screenshots/first-day-run-pass-rate.png", fullPage: true });
});
