/**
 * Issue 39 in Chromium, on the real tau-bench airline file (../shared/realdata; never copied here) with its
 * `reward` as the reference truth: from the agreement page, "Align this judge" — the calls it would make,
 * live progress, the baseline and the candidates on held-out folds with their intervals, the few-shot
 * prompt shown in full before promotion, Promote, and the metric page's agreement history with the old
 * prompt one click away. Screenshots under test-results/screenshots/align-*.png. Skips, saying so, where
 * the folder is absent.
 */
import { expect, test } from "@playwright/test";
import { readRealdata, realdataFileAbsent, realdataHas } from "../lib/testing/realdata/files";
import { judge, shot } from "./workspace-helpers";

const FILE = "tau-bench_gpt-4o-airline.json";

// @store-independent: the page over the alignments API, whose storing and recovery app/api/alignments/alignments.test.ts runs on both stores.
test("align a judge to the airline file's reward: held-out figures, the prompt in full, promote, agreement history", { tag: "@store-independent" }, async ({ page, request }) => {
  test.skip(!realdataHas(FILE), realdataFileAbsent(FILE));
  test.setTimeout(300_000);
  await request.post(`${judge}/reset`);
  const imported = await request.post("/api/datasets/import", {
    multipart: { file: { name: FILE, mimeType: "application/json", buffer: Buffer.from(readRealdata(FILE)) }, name: `Airline alignment ${Date.now()}` },
    timeout: 120_000,
  });
  expect(imported.status(), await imported.text()).toBe(201);
  const datasetId = ((await imported.json()) as { dataset_id: number }).dataset_id;
  const created = await request.post("/api/evaluation-pipeline-nodes", {
    data: {
      dataset_id: datasetId,
      name: "Task completed",
      evaluation_level: "conversation",
      prompt: "Did the agent complete the customer's task as the airline policy allows? @HISTORY",
      output_type: "checkbox",
      reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } },
    },
  });
  expect(created.status(), await created.text()).toBe(201);
  const metricId = ((await created.json()) as { id: number }).id;

  await page.goto(`/datasets/${datasetId}/agreement?metric=${metricId}`);
  const panel = page.getByTestId("align-panel");
  await panel.getByRole("button", { name: "Align this judge" }).click();
  await expect(panel.getByRole("combobox", { name: "Truth" })).toHaveValue("reference");
  await panel.getByRole("checkbox", { name: "Rewritten rubric" }).check();
  // A pass/fail metric has no threshold to choose.
  await expect(panel.getByRole("checkbox", { name: "Pass threshold" })).toBeDisabled();
  await panel.getByRole("button", { name: "Estimate calls" }).click();
  // 200 conversations: the baseline and two candidates judge each once; rewrite asks the optimiser 5 + 1 times.
  await expect(panel.getByTestId("align-estimate")).toContainText("200 truth cells · 600 judge calls + 6 optimiser calls");

  await panel.getByRole("button", { name: "Start alignment" }).click();
  const result = panel.getByTestId("alignment-result");
  await expect(result).toHaveAttribute("data-status", "completed", { timeout: 240_000 });
  await expect(result.getByTestId("align-status")).toContainText("Completed");
  await expect(result).toContainText("200 truth cells (116 fail, 84 pass)");
  const table = result.getByTestId("align-table");
  // The judge double passes every conversation: the baseline's κ is 0 (it agrees only by chance).
  await expect(table.getByTestId("align-row-baseline").getByTestId("kappa")).toContainText("0.000");
  await expect(table.getByTestId("align-row-few_shot")).toBeVisible();
  await expect(table.getByTestId("align-row-rewrite")).toBeVisible();
  const fewShot = result.getByTestId("align-candidate-few_shot");
  await expect(fewShot.locator("pre")).toContainText("=== Examples with their verdicts (alignment) ===");
  // The airline file's reward is the truth here: the examples say so, not that people labelled them.
  await expect(fewShot.locator("pre")).toContainText("Cells with the verdict their reference gives");
  await expect(fewShot.locator("pre")).not.toContainText("people labelled");
  await expect(fewShot.locator("pre")).toContainText("Did the agent complete the customer's task as the airline policy allows? @HISTORY");
  await shot(page, { path: "test-results/screenshots/align-result.png", fullPage: true });

  // On this file the double answers like the nearest example (a trial of the same task in another fold),
  // which agrees with the reward better than chance: few-shot's Δκ interval lies above zero; the rewritten
  // rubric (the double's canned text) lost @HISTORY: it is no candidate (issue 51.3), nothing to promote.
  const row = table.getByTestId("align-row-few_shot");
  await expect(row.getByText("recommended")).toBeVisible();
  await expect(row.getByText("interval above zero")).toBeVisible();
  await expect(table.getByTestId("align-row-rewrite").getByText("no candidate: see why below")).toBeVisible();
  await expect(table.getByTestId("align-row-rewrite").getByRole("button", { name: /Promote/ })).toHaveCount(0);
  await expect(result.getByTestId("align-candidate-rewrite")).toContainText("lost @HISTORY, which the metric's prompt uses");
  await row.getByRole("button", { name: "Promote", exact: true }).click();
  await expect(panel.getByTestId("align-promoted")).toContainText("Saved as version 2 of the metric's prompt (version 1 stays");
  await shot(page, { path: "test-results/screenshots/align-promoted.png", fullPage: true });

  await panel.getByRole("link", { name: "Open the metric" }).click();
  const history = page.getByTestId("agreement-history");
  await expect(history.getByTestId("history-version-2")).toContainText("current");
  await expect(history.getByTestId("history-version-2").getByTestId("history-aligned")).toContainText("held out in alignment");
  await expect(history.getByTestId("history-version-1")).toContainText("not run");
  await history.getByTestId("history-version-1").getByText("Show prompt").click();
  await expect(history.getByTestId("history-version-1").locator("pre")).toHaveText("Did the agent complete the customer's task as the airline policy allows? @HISTORY");
  await shot(page, { path: "test-results/screenshots/align-history.png", fullPage: true });
  // The old prompt, one click away.
  await history.getByRole("button", { name: "Use version 1's prompt again" }).click();
  await expect(history.getByTestId("history-version-3")).toContainText("current");

  // Back on the agreement page, the metric's last alignment is there on opening the panel.
  await page.goto(`/datasets/${datasetId}/agreement?metric=${metricId}`);
  await page.getByTestId("align-panel").getByRole("button", { name: "Align this judge" }).click();
  await expect(page.getByTestId("alignment-result")).toHaveAttribute("data-status", "completed");
  await expect(page.getByTestId("align-row-few_shot").getByText("recommended")).toBeVisible();
});
