/**
 * Agreement that means something for scores, in the browser: judge scores against labels a little off
 * agree within the tolerance shown (and not at tolerance 0, with the disagreeing cells listed), weighted κ
 * is shown, and a message tree's human ranks are compared with the judge's order of sibling replies.
 */
import { expect, test } from "@playwright/test";
import { judge, runCompleted, shot } from "./workspace-helpers";

const verdict = (score: number) => `[[judge-double:verdict {"score":${score},"reasoning":"ok"}]]`;
// Two prompts with ranked replies (rank 0 = best); judge a .9, b .5, c .7 and d .4, e .4.
const judged: Record<string, number> = { a: 0.9, b: 0.5, c: 0.7, d: 0.4, e: 0.4 };
const labelled: Record<string, number> = { a: 0.85, b: 0.5, c: 0.75, d: 0.35, e: 0.4 };
type Msg = { message_id: string; parent_id: string | null; text: string; role: string; rank?: number; replies: Msg[] };
const reply = (id: string, parent: string, rank: number): Msg => ({ message_id: id, parent_id: parent, text: `Reply ${id}. ${verdict(judged[id])}`, role: "assistant", rank, replies: [] });
const tree = (id: string, replies: Msg[]) => ({ message_tree_id: id, tree_state: "ready_for_export", prompt: { message_id: id, parent_id: null, text: `Prompt ${id}?`, role: "prompter", replies } });
const file = [tree("p1", [reply("a", "p1", 0), reply("b", "p1", 1), reply("c", "p1", 2)]), tree("p2", [reply("d", "p2", 0), reply("e", "p2", 1)])].map((t) => JSON.stringify(t)).join("\n");

// @store-independent (both tests): the agreement API's reading of scores, labels and ranks is app/api/labels/labels.test.ts (Spearman,
// MAE, thresholds, rules) and app/api/agreement/ranking tests on both stores, and runs on PostgreSQL are the workspace and executions
// specs; tolerance, κ and the disagreements are computed and shown the same whichever store held the rows.
test("scores agree within a tolerance, weighted κ and the disagreements are shown, and sibling replies are checked against human ranks", { tag: "@store-independent" }, async ({ page, request }) => {
  await request.post(`${judge}/reset`);
  const imported = await request.post("/api/datasets/import", {
    multipart: { file: { name: "trees.jsonl", mimeType: "application/json", buffer: Buffer.from(file) }, name: `Ranked ${Date.now()}` },
  });
  expect(imported.status(), await imported.text()).toBe(201);
  const body = (await imported.json()) as { dataset_id?: number; dataset?: { id: number } };
  const datasetId = body.dataset_id ?? body.dataset!.id;
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: datasetId, name: "Helpfulness", evaluation_level: "message", prompt: "Rate this reply: @CURRENT_MESSAGE.output", output_type: "progress", model_name: "judge-agreement" },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  const metricId = ((await metric.json()) as { id: number }).id;
  const run = await request.post("/api/evaluation-pipeline-executions/run", { data: { dataset_id: datasetId, pipeline_node_id: metricId } });
  expect(run.status(), await run.text()).toBe(202);
  const executionId = ((await run.json()) as { id: number }).id;
  await expect.poll(async () => ((await (await request.get(`/api/evaluation-pipeline-executions/${executionId}`)).json()) as { status: string }).status, { timeout: 60_000 }).toBe("completed");
  // A label on each stored reply, a little off the judge's score.
  const convs = (await (await request.get(`/api/datasets/${datasetId}/conversations?limit=50`)).json()) as Array<{ id: number }>;
  for (const c of convs) {
    const full = (await (await request.get(`/api/conversations/${c.id}`)).json()) as { messages: Array<{ id: number; role: string; meta: { message_id?: string } }> };
    for (const m of full.messages.filter((x) => x.role === "assistant")) {
      const label = await request.post("/api/labels", { data: { dataset_id: datasetId, pipeline_node_id: metricId, entity_type: "message", entity_id: m.id, value: labelled[m.meta.message_id!] } });
      expect(label.status(), await label.text()).toBe(201);
    }
  }

  await page.goto(`/datasets/${datasetId}/agreement?metric=${metricId}`);
  await page.getByRole("combobox", { name: "Source B (truth)" }).selectOption("labels");
  await expect(page.getByText("scores agree within 0.1")).toBeVisible();
  await expect(page.getByTestId("agreement-accuracy")).toHaveText("1.000");
  await expect(page.getByTestId("agreement-weighted_kappa")).not.toHaveText("—");
  await expect(page.getByText("The two sources agree on every cell.")).toBeVisible();
  // Exact agreement only: the replies labelled 0.05 off now disagree, and are listed to open.
  await page.getByRole("spinbutton", { name: "Tolerance" }).fill("0");
  await expect(page.getByTestId("agreement-accuracy")).toHaveText("0.400");
  await expect(page.getByTestId("disagreements").getByRole("link")).toHaveCount(3);
  // As pass/fail: the threshold is shown and used.
  await page.getByRole("combobox", { name: "Compare scores" }).selectOption("passfail");
  await expect(page.getByText("pass at score ≥ 0.5")).toBeVisible();
  await expect(page.getByTestId("confusion-matrix")).toBeVisible();

  // Human ranks among sibling replies: (a,b) ✓ (a,c) ✓ (b,c) ✗ and (d,e) a tie → 2.5 of 4 pairs.
  const ranking = page.getByTestId("ranking-agreement");
  await expect(ranking.getByTestId("ranking-pairwise")).toHaveText("0.625");
  await expect(ranking.getByTestId("ranking-spearman")).toHaveText("0.500");
  await expect(ranking.getByText("Ordered the other way round (1)")).toBeVisible();
  await shot(page, { path: "test-results/screenshots/agreement-scores-ranking.png", fullPage: true });
});

test("a progress metric against a pass/fail reference: the controls say it was compared at a threshold, not within a tolerance", { tag: "@store-independent" }, async ({ page, request }) => {
  await request.post(`${judge}/reset`);
  const trips = JSON.stringify({
    conversations: [1, 0, 1, 0].map((reward, i) => ({ name: `Trip ${i + 1}`, meta: { reward }, messages: [{ role: "user", content: `Book trip ${i + 1}.` }, { role: "assistant", content: "Booked." }] })),
  });
  const imported = await request.post("/api/datasets/import", {
    multipart: { file: { name: "trips.json", mimeType: "application/json", buffer: Buffer.from(trips) }, name: `Pass/fail reference ${Date.now()}` },
  });
  expect(imported.status(), await imported.text()).toBe(201);
  const datasetId = ((await imported.json()) as { dataset_id: number }).dataset_id;
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: {
      dataset_id: datasetId,
      name: "Goal reached",
      evaluation_level: "conversation",
      prompt: "How far did the assistant get? @HISTORY",
      output_type: "progress",
      reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } },
    },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  const metricId = ((await metric.json()) as { id: number }).id;
  const run = await request.post("/api/evaluation-pipeline-executions/run", { data: { dataset_id: datasetId, pipeline_node_id: metricId } });
  const runId = ((await run.json()) as { id: number }).id;
  await runCompleted(request, runId);

  await page.goto(`/datasets/${datasetId}/agreement?metric=${metricId}`);
  await expect(page.getByRole("combobox", { name: "Source B (truth)" })).toHaveValue("reference");
  // The judge's 0.8 passes all four at 0.5; the reward passes two → accuracy 0.5.
  await expect(page.getByTestId("agreement-accuracy")).toHaveText("0.500");
  await expect(page.getByRole("combobox", { name: "Compare scores" })).toHaveValue("passfail");
  await expect(page.getByRole("spinbutton", { name: "Threshold" })).toHaveValue("0.5");
  await expect(page.getByText("pass at score ≥ 0.5")).toBeVisible();
  await expect(page.getByText(/scores agree within/)).toHaveCount(0);
  await expect(page.getByRole("spinbutton", { name: "Tolerance" })).toHaveCount(0);
});
