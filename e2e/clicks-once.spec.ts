/**
 * No junk from ordinary clicks (issue 34.5): a double click on Import makes one dataset, and Import stays
 * disabled after "Import complete"; "Retry failed" with nothing failed starts no run and says so; a run
 * that evaluated nothing (n = 0) is neither Compare's default nor a source on the Agreement page.
 */
import fs from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { readRealdata, realdataPresent } from "../lib/testing/realdata/files";
import { fixtures, judge, runCompleted, shot } from "./workspace-helpers";

type Execution = { id: number; status: string; total_evaluations: number };

// @store-independent: one request for two clicks is the page's doing, and what the store does with a repeated
// Idempotency-Key is app/api/datasets/import/idempotency.test.ts on both stores; importing this file is
// app/api/datasets/import/realdata.test.ts and import.test.ts on both stores.
test("a double click on Import makes one dataset, and Import stays disabled once the file is in", { tag: "@store-independent" }, async ({ page, request }) => {
  // The real airline trajectories when ../shared/realdata is there, else the sample: the clicks are the point.
  const [fileName, text] = realdataPresent
    ? ["tau-bench_gpt-4o-airline.json", readRealdata("tau-bench_gpt-4o-airline.json")]
    : ["sample-dataset.json", fs.readFileSync(path.join(fixtures, "sample-dataset.json"), "utf8")];
  const name = `Double click ${Date.now()}`;
  await page.goto("/import");
  await page.getByLabel("choose a file").setInputFiles({ name: fileName, mimeType: "application/json", buffer: Buffer.from(text) });
  await page.getByLabel("Dataset name").fill(name);
  await page.getByRole("button", { name: "Import", exact: true }).dblclick();
  await expect(page.getByTestId("import-success")).toBeVisible({ timeout: 60_000 });
  const button = page.getByRole("button", { name: "Imported", exact: true });
  await expect(button).toBeDisabled();
  await expect(page.getByTestId("import-done-hint")).toBeVisible();
  await shot(page, { path: "test-results/screenshots/import-once.png", fullPage: true });
  // Submitting the form again (Enter in a field) does nothing either.
  await page.getByLabel("Dataset name").press("Enter");
  const datasets = (await (await request.get("/api/datasets?limit=500")).json()) as Array<{ name: string }>;
  expect(datasets.filter((d) => d.name === name)).toHaveLength(1);
  // A change of field means a new import: the button is back.
  await page.getByLabel("Dataset name").fill(`${name} again`);
  await expect(page.getByRole("button", { name: "Import", exact: true })).toBeEnabled();
});

test("Retry failed with nothing failed records no run; an empty run is neither Compare's default nor an Agreement source", async ({ page, request }) => {
  await request.post(`${judge}/reset`);
  const file = JSON.stringify({
    conversations: Array.from({ length: 3 }, (_, i) => ({
      name: `Chat ${i + 1}`,
      messages: [
        { role: "user", content: `Question ${i + 1}?` },
        { role: "assistant", content: `Answer ${i + 1}.` },
      ],
    })),
  });
  const imported = await request.post("/api/datasets/import", {
    multipart: { file: { name: "chats.json", mimeType: "application/json", buffer: Buffer.from(file) }, name: `Retry nothing ${Date.now()}`, get_feedback: "false" },
  });
  expect(imported.status(), await imported.text()).toBe(201);
  const datasetId = ((await imported.json()) as { dataset_id: number }).dataset_id;
  const solved = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: datasetId, name: "Solved", evaluation_level: "conversation", prompt: "Solved? @HISTORY", output_type: "checkbox", model_name: "judge-a" },
  });
  const tools = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: datasetId, name: "Tool use", evaluation_level: "step", prompt: "Good call? @CURRENT_STEP.tool_call", output_type: "checkbox" },
  });
  expect(solved.status()).toBe(201);
  expect(tools.status()).toBe(201);
  const solvedId = ((await solved.json()) as { id: number }).id;
  const toolsId = ((await tools.json()) as { id: number }).id;
  const runAndWait = async (body: Record<string, unknown>) => {
    const res = await request.post("/api/evaluation-pipeline-executions/run", { data: { dataset_id: datasetId, ...body } });
    expect(res.status(), await res.text()).toBe(202);
    const id = ((await res.json()) as Execution).id;
    await runCompleted(request, id);
    return id;
  };
  const first = await runAndWait({ pipeline_node_id: solvedId });
  const second = await runAndWait({ pipeline_node_id: solvedId, model_name: "judge-b" });
  // The conversations have no steps: the step column's run evaluates nothing (n = 0), and is the newest.
  const empty = await runAndWait({ pipeline_node_id: toolsId });
  const runs = async () => (await (await request.get(`/api/evaluation-pipeline-executions?dataset_id=${datasetId}`)).json()) as Execution[];
  expect((await runs()).find((r) => r.id === empty)?.total_evaluations).toBe(0);

  // Every cell is completed: Retry failed says there is nothing to retry and records no run.
  await page.goto(`/datasets/${datasetId}`);
  await page.getByRole("button", { name: "↻ Retry failed" }).click();
  await expect(page.getByTestId("run-info")).toContainText("Nothing to retry");
  // No error banner (Next.js keeps an empty route announcer with the alert role).
  await expect(page.getByRole("alert").filter({ hasText: /\S/ })).toHaveCount(0);
  await shot(page, { path: "test-results/screenshots/retry-nothing.png", fullPage: true });
  expect((await runs()).map((r) => r.id).sort((x, y) => x - y)).toEqual([first, second, empty]);
  const refused = await request.post("/api/evaluation-pipeline-executions/run", { data: { dataset_id: datasetId, retry: true } });
  expect(refused.status()).toBe(409);

  // Compare: the two runs that evaluated something, older as A; the empty one is not offered.
  await page.goto(`/datasets/${datasetId}/compare`);
  await expect(page.getByRole("combobox", { name: "Run A" })).toHaveValue(String(first));
  await expect(page.getByRole("combobox", { name: "Run B" })).toHaveValue(String(second));
  await expect(page.getByRole("combobox", { name: "Run A" }).locator(`option[value="${empty}"]`)).toHaveCount(0);
  // Agreement: the empty run is no source.
  await page.goto(`/datasets/${datasetId}/agreement?metric=${solvedId}`);
  const sourceA = page.getByRole("combobox", { name: "Source A (judged)" });
  await expect(sourceA.locator(`option[value="execution:${second}"]`)).toHaveCount(1);
  await expect(sourceA.locator(`option[value="execution:${empty}"]`)).toHaveCount(0);
});
