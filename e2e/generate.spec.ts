/**
 * Replay and simulate in the browser (issue 37): from the dataset's page, "Generate…" with a new
 * openai_chat target (the judge double), simulate with the scenario in meta, conversations appearing
 * live, then "Evaluate and compare with the source" in one click: the comparison by source with the
 * conversation that got worse one click away. The judge double is the target, the simulated user and the
 * judge: the simulated user's text carries the verdict marker the judge later reads, so the generated
 * conversation of one scenario fails where its source passed. And a generation cancelled from the page.
 */
import { expect, test, type APIRequestContext } from "@playwright/test";
import { judge, shot } from "./workspace-helpers";

const shots = "test-results/screenshots/generate";
const targetUrl = `http://127.0.0.1:${process.env.E2E_JUDGE_PORT ?? 4010}/v1`;
const marker = (pass: boolean) => `[[judge-double:verdict {"value":${pass},"reasoning":"${pass ? "The task was solved." : "The refund was refused."}"}]]`;
const scenarios = ["Rebook your flight to Lisbon for Friday.", "Ask for a refund of invoice INV-7.", "Change the passenger name to Ana Costa."];

async function setUp(request: APIRequestContext) {
  const file = JSON.stringify({
    conversations: scenarios.map((scenario, i) => ({
      name: ["Rebooking", "Refund", "Name change"][i],
      meta: { scenario },
      messages: [
        // The scenario is only in meta: the simulator's rules below must not match the judge's prompts of the source.
        { role: "user", content: `I need help with my booking. ${marker(true)}` },
        { role: "assistant", content: "Done, all set." },
      ],
    })),
  });
  const imported = await request.post("/api/datasets/import", {
    multipart: { file: { name: "support.json", mimeType: "application/json", buffer: Buffer.from(file) }, name: `Support ${Date.now()}`, user_id: "default", get_feedback: "false" },
  });
  expect(imported.status(), await imported.text()).toBe(201);
  const datasetId = ((await imported.json()) as { dataset_id: number }).dataset_id;
  const metric = await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: datasetId, name: "Task solved", evaluation_level: "conversation", prompt: "Did the agent solve the user's task? @HISTORY", output_type: "checkbox" },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  return datasetId;
}

test.describe("replay and simulate", () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("generates from the dataset's toolbar, watches conversations appear, then evaluates and compares with the source in one click", async ({ page, request }) => {
    const datasetId = await setUp(request);
    // The simulated user: the refund scenario's user says what makes the judge fail it; the others what makes it pass.
    const rules = [
      // The name change's user is slow to answer, so the other conversations are seen arriving first.
      { match: "Ana Costa", behaviour: { kind: "text", content: `Please sort this out for me. ${marker(true)}`, latencyMs: 2_500 } },
      { match: "INV-7", behaviour: { kind: "text", content: `I want my money back for that invoice. ${marker(false)}` } },
      { match: "You play the USER", behaviour: { kind: "text", content: `Please sort this out for me. ${marker(true)}` } },
    ];
    expect((await request.post(`${judge}/rules`, { data: rules })).status()).toBe(200);
    // Slow enough to see the conversations arrive one after another.
    await request.post(`${judge}/latency`, { data: 150 });

    await page.goto(`/datasets/${datasetId}`);
    await page.getByRole("link", { name: "Generate…" }).click();
    await expect(page.getByRole("heading", { name: "Replay and simulate", level: 1 })).toBeVisible();
    await page.getByLabel("Target", { exact: true }).selectOption("new");
    await page.getByLabel("Name", { exact: true }).fill("Candidate agent");
    await page.getByLabel("Base URL").fill(targetUrl);
    await page.getByLabel("Model", { exact: true }).fill("candidate-model");
    // Estimating saves a new target first, and says so; "Max turns" is the simulator's: not shown for a replay.
    await expect(page.getByTestId("estimate-saves-target")).toContainText("saves the new target first");
    await page.getByLabel("Mode", { exact: true }).selectOption("replay");
    await expect(page.getByLabel("Max turns")).toHaveCount(0);
    await page.getByLabel("Mode", { exact: true }).selectOption("simulate");
    await page.getByLabel("Repeats").fill("2");
    await page.getByLabel("Max turns").fill("2");
    await page.getByLabel("Scenario path (optional)").fill("meta.scenario");
    await page.getByRole("button", { name: "Estimate first" }).click();
    await expect(page.getByTestId("estimate")).toContainText("Would make 6 conversations: 12 target calls, up to 12 simulator calls");
    await shot(page, { path: `${shots}/1-form.png`, fullPage: true });
    // The estimate made the target: it is chosen now, and generating sends nothing more to create.
    await expect(page.getByLabel("Target", { exact: true })).not.toHaveValue("new");
    await page.getByRole("button", { name: "Generate", exact: true }).click();

    await expect(page).toHaveURL(/generate\?generation=\d+/);
    const list = page.getByRole("list", { name: "Generated conversations" });
    await expect(list.getByRole("link").first()).toBeVisible({ timeout: 30_000 });
    // Live: conversations listed while the generation still runs.
    await expect(page.getByTestId("generation-counts")).toContainText("processing");
    await expect(list.getByRole("link", { name: "Refund · repeat 2" })).toBeVisible({ timeout: 30_000 });
    await expect(list.getByRole("link", { name: /Name change/ })).toHaveCount(0);
    await shot(page, { path: `${shots}/2-live.png`, fullPage: true });
    await expect(page.getByTestId("generation-counts")).toContainText("6 of 6 · 6 completed · 0 failed", { timeout: 60_000 });
    await expect(page.getByTestId("generation-counts")).toContainText("completed");
    await expect(page.getByTestId("generation-counts")).toContainText("max turns: 6");
    await expect(list.getByRole("link")).toHaveCount(6);
    await expect(list.getByRole("link", { name: "Refund · repeat 2" })).toBeVisible();
    await shot(page, { path: `${shots}/3-done.png`, fullPage: true });

    await request.post(`${judge}/latency`, { data: 0 });
    await expect(page.getByLabel(/Task solved/)).toBeChecked();
    await page.getByRole("button", { name: "Evaluate and compare with the source" }).click();
    await expect(page.getByRole("heading", { name: "Compared with its source", level: 1 })).toBeVisible({ timeout: 60_000 });
    const metrics = page.getByRole("table", { name: "Metrics compared" });
    // Source: 3 of 3 pass; generated: the refund fails in both repeats (4 of 6 pass), one conversation got
    // worse (Δ −1 of 3 pairs), and pass^k and pass@k are 2 of 3.
    const cells = metrics.getByRole("row", { name: /Task solved/ }).getByRole("cell");
    await expect(cells).toHaveText(["Task solved", "3", "2", "100%", "67%", "1", "0", "-0.33", "67%", "67%", "0", "0"]);
    const worse = page.getByRole("table", { name: "Got worse" });
    await expect(worse.getByRole("row")).toHaveCount(2);
    await expect(worse.getByRole("link", { name: "Refund" })).toBeVisible();
    await shot(page, { path: `${shots}/4-compare.png`, fullPage: true });

    // The generated conversation that got worse, one click away, opened in its dataset's grid.
    await worse.getByRole("link", { name: "fail (repeat 1)" }).click();
    await expect(page.getByText("I want my money back for that invoice.").first()).toBeVisible({ timeout: 30_000 });
    await shot(page, { path: `${shots}/5-worse-conversation.png`, fullPage: true });
  });

  test("a generation cancelled from its page stops at once and says so", async ({ page, request }) => {
    const datasetId = await setUp(request);
    const target = await request.post("/api/targets", { data: { name: `Hanging agent ${Date.now()}`, kind: "openai_chat", url: targetUrl, model: "candidate-model" } });
    expect(target.status()).toBe(201);
    // Every call hangs until the cancel aborts it.
    await request.post(`${judge}/rules`, { data: { match: { regex: "[\\s\\S]" }, behaviour: { kind: "hang" } } });
    await page.goto(`/datasets/${datasetId}/generate`);
    await page.getByLabel("Target", { exact: true }).selectOption({ label: `${((await target.json()) as { name: string }).name} (openai_chat · candidate-model)` });
    await page.getByLabel("Mode", { exact: true }).selectOption("replay");
    await page.getByRole("button", { name: "Generate", exact: true }).click();
    await expect(page.getByTestId("generation-counts")).toContainText("processing", { timeout: 30_000 });
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect(page.getByTestId("generation-counts")).toContainText("cancelled");
    await expect(page.getByText("No conversation written yet.")).toBeVisible();
    await expect(page.getByRole("button", { name: "Evaluate and compare with the source" })).toHaveCount(0);
    await shot(page, { path: `${shots}/6-cancelled.png`, fullPage: true });
    // The dataset's generate page lists it among its earlier generations, one click from its page.
    await page.goto(`/datasets/${datasetId}/generate`);
    const earlier = page.getByRole("table", { name: "Earlier generations" });
    await expect(earlier.getByRole("row")).toHaveCount(2);
    await expect(earlier).toContainText("cancelled");
    await earlier.getByRole("link", { name: /replay/ }).click();
    await expect(page.getByTestId("generation-counts")).toContainText("cancelled");
    // The calls that hung were aborted, not left open.
    await expect.poll(async () => ((await (await request.get(`${judge}/requests`)).json()) as { requests: Array<{ closedAt: string | null }> }).requests.every((r) => r.closedAt !== null)).toBe(true);
  });
});
