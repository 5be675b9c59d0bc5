/**
 * The analyst's day on real agent logs (issue 26): the reference set from the metric editor, the review
 * queue on long agent transcripts, the conversation panel, the toolbar and the small things. Uses the
 * tau-bench airline trajectories and the Open Assistant trees from ../shared/realdata (read-only), and
 * skips, saying so, where that folder is absent.
 */
import fs from "node:fs";
import path from "node:path";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { importFixture, judge, openApiReference, runCompleted, shot } from "./workspace-helpers";

const realdata = path.resolve(process.cwd(), "../shared/realdata");
const airlineFile = path.join(realdata, "tau-bench_gpt-4o-airline.json");
const oasstFile = path.join(realdata, "oasst_en_100_tree.jsonl");
const present = fs.existsSync(airlineFile) && fs.existsSync(oasstFile);
const skipReason = `${realdata} is absent: the real public files live there, never in this repository`;
const shots = "test-results/screenshots/analyst-day";

type Step = { id: number; position: number; tool_call: unknown; tool_result: unknown; output_content: string | null };
type Message = { id: number; role: string; position: number; content: string | null; steps: Step[] };
type Conversation = { id: number; name: string | null; meta: Record<string, unknown> | null; messages: Message[]; message_count: number };

async function importFile(request: APIRequestContext, file: string, name: string): Promise<number> {
  const created = await request.post("/api/datasets", { data: { name } });
  expect(created.status()).toBe(201);
  const { id } = (await created.json()) as { id: number };
  const imported = await request.post(`/api/datasets/${id}/import`, {
    multipart: { file: { name: path.basename(file), mimeType: "application/octet-stream", buffer: fs.readFileSync(file) }, get_feedback: "false" },
    timeout: 120_000,
  });
  expect(imported.status(), await imported.text()).toBe(200);
  return id;
}

/** The airline trajectories, imported once for the specs of this file (one worker runs them in order). */
let airline: number | null = null;
async function airlineDataset(request: APIRequestContext): Promise<number> {
  airline ??= await importFile(request, airlineFile, `Airline ${Date.now()}`);
  return airline;
}

async function createMetric(request: APIRequestContext, body: Record<string, unknown>): Promise<number> {
  const res = await request.post("/api/evaluation-pipeline-nodes", { data: body });
  expect(res.status(), await res.text()).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

async function runCell(request: APIRequestContext, datasetId: number, metricId: number, entity: { type: string; id: number }): Promise<void> {
  const run = await request.post("/api/evaluation-pipeline-executions/run", {
    data: { dataset_id: datasetId, pipeline_node_id: metricId, entity_type: entity.type, entity_id: entity.id, model_name: `analyst-day-${Date.now()}` },
  });
  expect(run.status(), await run.text()).toBe(202);
  const id = ((await run.json()) as { id: number }).id;
  await runCompleted(request, id);
}

async function conversations(request: APIRequestContext, datasetId: number): Promise<Array<{ id: number; message_count: number; name: string | null }>> {
  return (await (await request.get(`/api/datasets/${datasetId}/conversations?limit=500`)).json()) as Array<{ id: number; message_count: number; name: string | null }>;
}

async function conversation(request: APIRequestContext, id: number): Promise<Conversation> {
  return (await (await request.get(`/api/conversations/${id}`)).json()) as Conversation;
}

/** Whether an element lies wholly inside the browser's viewport. */
async function inViewport(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).first().evaluate((el) => {
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.top < window.innerHeight && r.bottom <= window.innerHeight + 1 && r.height > 0;
  });
}

test.describe("the analyst's day on agent logs", () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("the metric editor sets a reference from the dataset's meta fields, previews pass/fail, and the review queue links to it", async ({ page, request }) => {
    test.skip(!present, skipReason);
    test.setTimeout(180_000);
    const datasetId = await airlineDataset(request);
    const metricId = await createMetric(request, {
      dataset_id: datasetId,
      name: "Goal reached",
      evaluation_level: "conversation",
      prompt: "Did the agent do what the user asked? @HISTORY",
      output_type: "checkbox",
    });

    // The review queue says a reference is missing and links to where it is set.
    await page.goto(`/datasets/${datasetId}/review?metric=${metricId}`);
    await page.getByRole("link", { name: "Set a reference on the metric first →" }).click();
    await expect(page).toHaveURL(new RegExp(`/datasets/${datasetId}/metrics/${metricId}#reference$`));
    const form = page.getByRole("form", { name: "Reference" });
    await expect(form).toBeInViewport();

    await form.getByLabel("A meta field").check();
    // The path picker lists the dataset's own meta fields with example values.
    const field = form.getByLabel("Field", { exact: true });
    await expect(field.locator("option", { hasText: "meta.reward — 0, 1 (200)" })).toHaveCount(1);
    await expect(field.locator("option", { hasText: "meta.task_id" })).toHaveCount(1);
    await field.selectOption("meta.reward");
    const preview = form.getByTestId("reference-preview");
    // Without a rule a checkbox metric reads 1/0 as pass/fail.
    await expect(preview).toContainText("Of 200 cells: 84 pass · 116 fail");
    await form.getByLabel("Rule").selectOption(">=");
    await form.getByLabel("Value").fill("0.5");
    await expect(preview).toContainText("Of 200 cells: 84 pass · 116 fail · 0 without a reading");
    await form.getByLabel("Rule").selectOption("==");
    await form.getByLabel("Value").fill("0");
    await expect(preview).toContainText("Of 200 cells: 116 pass · 84 fail");
    // A rule the metric cannot save says why before saving.
    await form.getByLabel("Rule").selectOption(">");
    await form.getByLabel("Value").fill("high");
    await expect(preview.getByRole("alert")).toContainText("must be a number with >");
    await form.getByLabel("Rule").selectOption(">=");
    await form.getByLabel("Value").fill("1");
    await expect(preview).toContainText("Of 200 cells: 84 pass · 116 fail");
    await shot(page, { path: `${shots}/1-reference-editor.png`, fullPage: true });
    await form.getByRole("button", { name: "Save reference" }).click();
    await expect(form.getByRole("status")).toHaveText("Reference saved.");

    const saved = (await (await request.get(`/api/evaluation-pipeline-nodes/${metricId}`)).json()) as { reference: unknown };
    expect(saved.reference).toEqual({ source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } });
    // Reloaded, the editor shows what is saved.
    await page.reload();
    await expect(page.getByRole("form", { name: "Reference" }).getByLabel("Field", { exact: true })).toHaveValue("meta.reward");
    await expect(page.getByRole("form", { name: "Reference" }).getByLabel("Value")).toHaveValue("1");
    // The queue now filters on disagreement instead of pointing at the editor.
    await page.goto(`/datasets/${datasetId}/review?metric=${metricId}`);
    await expect(page.getByRole("checkbox", { name: "Judge and reference disagree" })).toBeEnabled();
    await expect(page.getByRole("link", { name: "Set a reference on the metric first →" })).toHaveCount(0);
  });

  test("the review queue opens an agent transcript on what is judged: policy folded, reference beside the verdict, label marked, p/f on scores", async ({ page, request }) => {
    test.skip(!present, skipReason);
    test.setTimeout(180_000);
    const datasetId = await airlineDataset(request);
    const goal = await createMetric(request, {
      dataset_id: datasetId,
      name: "Goal progress",
      evaluation_level: "conversation",
      prompt: "How far did the agent get? @HISTORY",
      output_type: "progress",
      reference: { source: "meta", level: "conversation", path: "meta.reward" },
    });
    const first = (await conversations(request, datasetId))[0];
    await runCell(request, datasetId, goal, { type: "conversation", id: first.id });
    const c = await conversation(request, first.id);
    expect(c.messages[0].role).toBe("system");
    expect(c.messages[0].content!.length).toBeGreaterThan(6000);

    await page.goto(`/datasets/${datasetId}/review?metric=${goal}`);
    const cell = page.getByTestId("review-cell");
    await expect(cell).toHaveAttribute("data-cell", `conversation:${first.id}`);
    // The 6,000-character airline policy is folded; the first user message is on screen without scrolling.
    const system = cell.locator(`[data-entity="message:${c.messages[0].id}"]`);
    await expect(system.getByTestId("folded-message")).not.toHaveAttribute("open", "");
    await expect(system.getByText(/System message · 6,\d{3} characters — show/)).toBeVisible();
    expect(await inViewport(page, '[data-testid=review-cell] [data-role="user"]')).toBe(true);
    // One click opens it.
    await system.getByText(/System message ·/).click();
    await expect(system.getByTestId("message-content")).toContainText("airline");
    await system.getByText(/System message ·/).click();
    // The reference's reading beside the verdict (reward 0 in the file for task 0, trial 0).
    const reward = c.meta?.reward as number;
    await expect(page.getByTestId("review-verdict")).toBeVisible();
    await expect(page.getByTestId("review-reference")).toHaveText(`Reference (meta.reward): ${reward}`);
    // p labels a progress metric 1; the label is marked on its button when the cell is shown again.
    await expect(page.getByTestId("review-keys-hint")).toHaveText("p / f: label 1 / 0, then the next cell.");
    await page.keyboard.press("p");
    await expect(page.getByRole("status")).toContainText("Saved 1");
    await expect(cell).not.toHaveAttribute("data-cell", `conversation:${first.id}`);
    await page.keyboard.press("k");
    await expect(cell).toHaveAttribute("data-cell", `conversation:${first.id}`);
    await expect(page.getByTestId("review-label")).toHaveText("1");
    await expect(page.getByRole("button", { name: "✓ 1 (5)" })).toHaveAttribute("aria-pressed", "true");
    await expect(page.getByRole("button", { name: "0 (1)", exact: true })).toHaveAttribute("aria-pressed", "false");
    await shot(page, { path: `${shots}/4-review-airline.png` });
    await page.keyboard.press("f");
    await expect(page.getByRole("status")).toContainText("Saved 0");
    const labels = (await (await request.get(`/api/labels?dataset_id=${datasetId}&pipeline_node_id=${goal}`)).json()) as Array<{ entity_id: number; value: unknown }>;
    expect(labels.find((l) => l.entity_id === first.id)?.value).toBe(0);

    // A text metric says why p/f do nothing.
    const text = await createMetric(request, { dataset_id: datasetId, name: "Category", evaluation_level: "conversation", prompt: "Category? @HISTORY", output_type: "text" });
    await page.goto(`/datasets/${datasetId}/review?metric=${text}`);
    await expect(page.getByTestId("review-keys-hint")).toHaveText(/p \/ f do not apply: a text metric is labelled with a category/);
  });

  test("the review queue reaches the judged message of a 60-message agent transcript without scrolling", async ({ page, request }) => {
    test.skip(!present, skipReason);
    // A 60-message agent transcript: the airline policy as its system message, then 59 turns with tool calls.
    const policy = (JSON.parse(fs.readFileSync(airlineFile, "utf8")) as Array<{ traj: Array<{ role: string; content: string }> }>)[0].traj[0].content;
    const messages: unknown[] = [{ role: "system", content: policy }];
    for (let i = 1; messages.length < 60; i++) {
      messages.push({ role: "user", content: `Turn ${i}: please check reservation ABC${i} and tell me its status.` });
      if (messages.length >= 60) break;
      messages.push({
        role: "assistant",
        content: `Reservation ABC${i} is confirmed; the flight leaves at ${8 + (i % 10)}:00.`,
        tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "get_reservation_details", arguments: JSON.stringify({ reservation_id: `ABC${i}` }) } }],
      });
    }
    const created = await request.post("/api/datasets", { data: { name: `Long transcript ${Date.now()}` } });
    const datasetId = ((await created.json()) as { id: number }).id;
    const imported = await request.post(`/api/datasets/${datasetId}/import`, {
      multipart: { file: { name: "long.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify([{ task_id: 7, messages }])) }, get_feedback: "false" },
    });
    expect(imported.status(), await imported.text()).toBe(200);
    const [row] = await conversations(request, datasetId);
    expect(row.message_count).toBe(60);
    const c = await conversation(request, row.id);
    // The judged message: the 25th of the agent's 30 replies, near the end of the transcript.
    const judged = c.messages.filter((m) => m.role === "assistant")[24];
    expect(judged.position).toBeGreaterThan(45);
    const metric = await createMetric(request, {
      dataset_id: datasetId,
      name: "Reply correct",
      evaluation_level: "message",
      prompt: "Is this reply correct? @CURRENT_MESSAGE.output",
      output_type: "checkbox",
    });
    await runCell(request, datasetId, metric, { type: "message", id: judged.id });

    await page.goto(`/datasets/${datasetId}/review?metric=${metric}`);
    await page.getByRole("combobox", { name: "Status" }).selectOption("completed");
    await expect(page.getByTestId("review-cell")).toHaveAttribute("data-cell", `message:${judged.id}`);
    const target = `[data-testid=review-conversation] [data-entity="message:${judged.id}"]`;
    await expect(page.locator(target)).toBeVisible();
    await expect.poll(() => inViewport(page, target)).toBe(true);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    await shot(page, { path: `${shots}/4-review-60-messages.png` });

    // Opened straight on the cell (a link with ?cell=), it lands there too.
    await page.goto(`/datasets/${datasetId}/review?metric=${metric}&cell=message:${judged.id}`);
    await expect(page.getByTestId("review-cell")).toHaveAttribute("data-cell", `message:${judged.id}`);
    await expect.poll(() => inViewport(page, target)).toBe(true);
  });

  test("the conversation panel: named rows, each reply once among its steps, JSON that wraps and counts", async ({ page, request }) => {
    test.skip(!present, skipReason);
    test.setTimeout(180_000);
    const datasetId = await airlineDataset(request);
    const rows = await conversations(request, datasetId);
    // The trajectory with the most tool calls whose replies are also output steps.
    let chosen: { c: Conversation; reply: Message } | null = null;
    for (const r of rows.slice(0, 12)) {
      const c = await conversation(request, r.id);
      const reply = c.messages.find((m) => m.role === "assistant" && m.content && m.steps.some((s) => s.tool_call) && m.steps.some((s) => s.output_content === m.content));
      if (reply) {
        chosen = { c, reply };
        break;
      }
    }
    expect(chosen, "an agent turn with a reply and tool calls").not.toBeNull();
    const { c, reply } = chosen!;
    const label = `task_id ${c.meta?.task_id as number} · trial ${c.meta?.trial as number}`;

    await page.goto(`/datasets/${datasetId}`);
    const grid = page.getByRole("table", { name: "Evaluation grid" });
    await expect(grid.getByTestId("grid-row").first()).toContainText("task_id 0 · trial 0");
    await expect(grid.getByText(/^Conversation \d+$/)).toHaveCount(0);
    await grid.getByText(label, { exact: true }).click();
    const panel = page.getByTestId("conversation-panel");
    await expect(panel.getByRole("heading", { level: 2 })).toHaveText(label);

    // The reply is shown once: as the step where it happened, not also above the tool calls.
    const message = panel.locator(`[data-entity="message:${reply.id}"]`);
    await message.scrollIntoViewIfNeeded();
    await expect(message.getByTestId("message-content")).toHaveCount(0);
    await expect(message.getByText(reply.content!, { exact: true })).toHaveCount(1);
    const kinds = await message.getByTestId("conversation-step").evaluateAll((els) =>
      els.map((el) => (el.textContent?.includes("Tool call") ? "call" : el.textContent?.includes("Tool result") ? "result" : el.textContent?.includes("Reply") ? "reply" : "other")),
    );
    const expected = reply.steps.map((s) => (s.tool_call ? "call" : s.tool_result != null ? "result" : s.output_content ? "reply" : "other"));
    expect(kinds).toEqual(expected);

    // The task's expected actions: an array that says how many items it holds, folded or open.
    const actions = panel.getByTestId("json-summary").filter({ hasText: /^"actions": \[/ }).first();
    if ((await actions.locator("xpath=..").getAttribute("open")) !== null) await actions.click();
    await expect(actions).toHaveText(/^"actions": \[ \d+ items? \]$/, { useInnerText: true });
    const panelRight = (await panel.boundingBox())!.x + (await panel.boundingBox())!.width;
    const overflow = await panel.getByTestId("json-view").evaluateAll((els, right) => els.filter((el) => el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > right + 1).length, panelRight);
    expect(overflow).toBe(0);
    await actions.click();
    await expect(actions).toHaveText(/^"actions": \[ \d+ items?$/, { useInnerText: true });
    await shot(page, { path: `${shots}/5-conversation-panel.png` });
  });

  test("Open Assistant trees: rows named by the prompt's first words", async ({ page, request }) => {
    test.skip(!present, skipReason);
    test.setTimeout(180_000);
    const datasetId = await importFile(request, oasstFile, `Open Assistant ${Date.now()}`);
    const first = JSON.parse(fs.readFileSync(oasstFile, "utf8").split("\n")[0]) as { prompt: { text: string } };
    await page.goto(`/datasets/${datasetId}`);
    const grid = page.getByRole("table", { name: "Evaluation grid" });
    const words = first.prompt.text.replace(/\s+/g, " ").trim();
    await expect(grid.getByTestId("grid-row").first()).toContainText(words.length > 60 ? words.slice(0, 40) : words);
    await expect(grid.getByText(/^Conversation \d+$/)).toHaveCount(0);
    await grid.getByTestId("grid-row").first().click({ position: { x: 60, y: 12 } });
    const panel = page.getByTestId("conversation-panel");
    await expect(panel.getByRole("heading", { level: 2 })).toContainText(words.slice(0, 40));
    await shot(page, { path: `${shots}/5-open-assistant.png` });
  });

  test("the toolbar remembers mode and model per dataset, starts async at batch 32, and waits while a run goes", async ({ page, request }) => {
    const a = await importFixture(request, "sample-dataset.json", `Toolbar A ${Date.now()}`);
    const b = await importFixture(request, "sample-dataset.json", `Toolbar B ${Date.now()}`);
    await createMetric(request, { dataset_id: a, name: "Solved", evaluation_level: "conversation", prompt: "Solved? @HISTORY", output_type: "checkbox" });
    const mode = (name: string) => page.getByRole("radiogroup", { name: "Mode" }).getByRole("radio", { name, exact: true });

    await page.goto(`/datasets/${a}`);
    await expect(mode("Async")).toBeChecked();
    await expect(page.getByLabel("Batch size")).toHaveValue("32");
    await page.getByRole("radiogroup", { name: "Mode" }).getByText("Sync", { exact: true }).click();
    await page.getByLabel("Model override").fill("judge-for-a");
    await page.reload();
    await expect(mode("Sync")).toBeChecked();
    await expect(page.getByLabel("Model override")).toHaveValue("judge-for-a");
    // Another dataset keeps its own (here the defaults).
    await page.goto(`/datasets/${b}`);
    await expect(mode("Async")).toBeChecked();
    await expect(page.getByLabel("Model override")).toHaveValue("");
    await page.goto(`/datasets/${a}`);
    await expect(mode("Sync")).toBeChecked();

    // A run of the page (async, batch 32 by default) is going: Run all waits for it.
    await page.getByRole("radiogroup", { name: "Mode" }).getByText("Async").click();
    await page.getByLabel("Model override").fill(`toolbar-${Date.now()}`);
    await request.post(`${judge}/latency`, { data: 3_000 });
    await page.getByRole("button", { name: "Run all" }).click();
    await expect(page.getByRole("button", { name: "Running…" })).toBeDisabled();
    await expect(page.getByRole("button", { name: "Retry failed" })).toBeDisabled();
    await shot(page, { path: `${shots}/6-toolbar-running.png` });
    await expect(page.getByTestId("run-status").first()).toHaveAttribute("data-status", "completed", { timeout: 30_000 });
    await expect(page.getByRole("button", { name: "Run all" })).toBeEnabled();
    const executions = (await (await request.get(`/api/evaluation-pipeline-executions?dataset_id=${a}`)).json()) as Array<{ meta: { execution_mode: string; batch_size: number } }>;
    expect(executions[0].meta).toMatchObject({ execution_mode: "async", batch_size: 32 });
  });

  // @store-independent: the grid's error banner, a static icon and the API reference page; refusing a bad
  // filter is the grid route's (app/api/datasets/[id]/grid/meta.test.ts), on both stores.
  test("an invalid filter is refused once beside the field while the grid stays, a good view lives in the address; the favicon and the API reference are served", { tag: "@store-independent" }, async ({ page, request }) => {
    const datasetId = await importFixture(request, "sample-dataset.json", `Filter ${Date.now()}`);
    await page.goto(`/datasets/${datasetId}`);
    await expect(page.getByText(/^5 conversations ·/)).toBeVisible();
    await page.getByLabel("Filter rows").fill("meta.reward=>>1");
    await page.getByRole("button", { name: "Apply" }).click();
    // Refused: said once, beside the field, and the grid keeps the rows it had (it used to vanish, the reason printed twice).
    const error = page.getByTestId("grid-view-error");
    await expect(error).toContainText(/Filter: must be up to 10/);
    await expect(page.getByText(/must be up to 10/)).toHaveCount(1);
    await expect(page.getByLabel("Filter rows")).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByRole("table", { name: "Evaluation grid" })).toBeVisible();
    await expect(page.getByText(/^5 conversations ·/)).toBeVisible();
    expect(new URL(page.url()).searchParams.get("filter")).toBeNull();
    await shot(page, { path: `${shots}/6-invalid-filter.png` });

    // A good view is applied and kept in the address: a reload shows the same rows.
    await page.getByLabel("Filter rows").fill("meta.channel==mobile");
    await page.getByLabel("Sort rows").fill("-meta.channel");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page.getByText(/^1 conversation ·/)).toBeVisible();
    await expect(error).toHaveCount(0);
    expect(new URL(page.url()).searchParams.get("filter")).toBe("meta.channel==mobile");
    await page.reload();
    await expect(page.getByText(/^1 conversation ·/)).toBeVisible();
    await expect(page.getByLabel("Filter rows")).toHaveValue("meta.channel==mobile");
    await expect(page.getByLabel("Sort rows")).toHaveValue("-meta.channel");
    await page.getByRole("button", { name: "Clear" }).click();
    await expect(page.getByText(/^5 conversations ·/)).toBeVisible();
    expect(new URL(page.url()).searchParams.get("filter")).toBeNull();

    const icon = await request.get("/favicon.ico");
    expect(icon.status()).toBe(200);
    expect(icon.headers()["content-type"]).toContain("image/");
    expect((await icon.body()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
    await expect(page.locator('link[rel="icon"]').first()).toHaveAttribute("href", /favicon\.ico|icon\.svg/);

    // The API reference (Swagger UI from its prebuilt bundle) renders with no error in the console.
    const consoleErrors: string[] = [];
    page.on("pageerror", (e) => consoleErrors.push(`pageerror ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    const ui = await openApiReference(page, "/datasets/{id}/meta-fields");
    // An operation expands and its body renders: parameters and responses, resolved from the 3.1 document.
    const operation = ui.getByRole("button", { name: "get /datasets/{id}/meta-fields", exact: true });
    await operation.click();
    await expect(operation).toHaveAttribute("aria-expanded", "true");
    const body = ui.locator(".opblock.is-open");
    await expect(body.locator(".parameters-container")).toContainText("id");
    await expect(body.locator(".responses-wrapper")).toContainText("200");
    await shot(page, { path: `${shots}/6-docs.png` });
    expect(consoleErrors).toEqual([]);
  });
});
