/**
 * A constant judge on the real Open Assistant trees (../shared/realdata): the judge double scores every
 * reply 0.8, a reply stored on several root-to-leaf paths has its copies averaged (0.7999999999999999 for
 * six copies), and the agreement page must still read every sibling pair as a tie — pairwise accuracy
 * 0.5, nothing "ordered the other way round", Spearman undefined with its reason. Issue 34.1; and (34.6) figures
 * over no cell do not read as agreement, an undefined figure says why, and a confusion cell's links fold.
 */
import { expect, test } from "@playwright/test";
import { readRealdata, realdataAbsentMessage, realdataPresent } from "../lib/testing/realdata/files";
import { judge, runCompleted, shot } from "./workspace-helpers";

test("a constant judge on the Open Assistant trees ties every pair: pairwise accuracy 0.5, none reversed", async ({ page, request }) => {
  test.skip(!realdataPresent, `ranking-ties.spec.ts: ${realdataAbsentMessage}`);
  test.setTimeout(240_000);
  await request.post(`${judge}/reset`);
  const imported = await request.post("/api/datasets/import", {
    multipart: { file: { name: "oasst_en_100_tree.jsonl", mimeType: "application/json", buffer: Buffer.from(readRealdata("oasst_en_100_tree.jsonl")) }, name: `Open Assistant constant ${Date.now()}`, get_feedback: "false" },
  });
  expect(imported.status(), await imported.text()).toBe(201);
  const body = (await imported.json()) as { dataset_id?: number; dataset?: { id: number } };
  const datasetId = body.dataset_id ?? body.dataset!.id;
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: datasetId, name: "Helpfulness", evaluation_level: "message", prompt: "Rate this reply: @CURRENT_MESSAGE.output", output_type: "progress", model_name: "judge-constant" },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  const metricId = ((await metric.json()) as { id: number }).id;
  // The double's default verdict for a 0..1 score is 0.8, whatever the reply.
  const run = await request.post("/api/evaluation-pipeline-executions/run", { data: { dataset_id: datasetId, pipeline_node_id: metricId, execution_mode: "async", batch_size: 16 } });
  expect(run.status(), await run.text()).toBe(202);
  const executionId = ((await run.json()) as { id: number }).id;
  await runCompleted(request, executionId, { timeout: 180_000 });

  await page.goto(`/datasets/${datasetId}/agreement?metric=${metricId}`);
  // No labels yet: the figures are over no cell, which is not "agreeing on every cell".
  await expect(page.getByTestId("agreement-n")).toHaveText("0");
  await expect(page.getByTestId("agreement-nothing-to-compare")).toBeVisible();
  await expect(page.getByText("The two sources agree on every cell.")).toHaveCount(0);
  await expect(page.getByTestId("agreement-spearman-why")).toHaveText("no cell read by both sources");
  const ranking = page.getByTestId("ranking-agreement");
  await expect(ranking.getByTestId("ranking-pairwise")).toHaveText("0.500");
  await expect(ranking.getByTestId("ranking-ties")).toHaveText("every one scored alike by the judge");
  await expect(ranking.getByTestId("ranking-spearman")).toHaveText("—");
  await expect(ranking.getByText(/undefined: the judge scored every reply alike in all \d+ prompts/)).toBeVisible();
  await expect(ranking.getByText(/Ordered the other way round/)).toHaveCount(0);
  await ranking.scrollIntoViewIfNeeded();
  await shot(page, { path: "test-results/screenshots/ranking-constant-judge.png", fullPage: true });

  // Eight replies labelled 0 against the judge's 0.8 (34.6): Spearman says why it is undefined, and the eight
  // false passes are five links and "3 more", not a list that makes the page thousands of pixels tall.
  const rows = (await (await request.get(`/api/datasets/${datasetId}/grid?level=message&limit=8`)).json()) as Array<{ entity_id: number }>;
  expect(rows).toHaveLength(8);
  for (const r of rows) {
    const label = await request.post("/api/labels", { data: { dataset_id: datasetId, pipeline_node_id: metricId, entity_type: "message", entity_id: r.entity_id, value: 0 } });
    expect(label.status(), await label.text()).toBe(201);
  }
  await page.reload();
  await page.getByRole("combobox", { name: "Source B (truth)" }).selectOption("labels");
  await expect(page.getByTestId("agreement-n")).toHaveText("8");
  await expect(page.getByTestId("agreement-spearman-why")).toHaveText(/^undefined: one source gave every cell the same score/);
  await page.getByRole("combobox", { name: "Compare scores" }).selectOption("passfail");
  const falsePass = page.getByTestId("confusion-false-pass");
  await expect(falsePass.getByText("8", { exact: true })).toBeVisible();
  await expect(falsePass.getByRole("link")).toHaveCount(5);
  await falsePass.getByText("3 more").click();
  await expect(falsePass.getByRole("link")).toHaveCount(8);
  await shot(page, { path: "test-results/screenshots/agreement-confusion-folded.png", fullPage: true });
});
