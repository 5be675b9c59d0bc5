import fs from "node:fs";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { shot } from "./workspace-helpers";

const sample = fs.readFileSync(path.join(__dirname, "fixtures", "sample-dataset.json"));

/** A dataset holding the sample fixture's five conversations, through the public API. */
async function sampleDataset(request: APIRequestContext, name: string): Promise<number> {
  const created = await request.post("/api/datasets", { data: { name } });
  expect(created.status()).toBe(201);
  const { id } = (await created.json()) as { id: number };
  const imported = await request.post(`/api/datasets/${id}/import`, {
    multipart: { file: { name: "sample-dataset.json", mimeType: "application/json", buffer: sample }, get_feedback: "false" },
  });
  expect(imported.status(), await imported.text()).toBe(200);
  return id;
}

type Metric = { name: string; template_id: number | null; evaluation_level: string; output_type: string; template_variables: string[] };

async function metricsOf(request: APIRequestContext, datasetId: number): Promise<Metric[]> {
  return (await (await request.get(`/api/evaluation-pipeline-nodes?dataset_id=${datasetId}`)).json()) as Metric[];
}

// @store-independent: the metric form, preview and template library; saving metrics and templates is route tests on both stores.
test.describe("metrics", { tag: "@store-independent" }, () => {
  test("creates a metric from a template, with the judge prompt previewed", async ({ page, request }) => {
    const datasetId = await sampleDataset(request, `Metrics from template ${Date.now()}`);
    await page.goto(`/datasets/${datasetId}`);
    await page.getByRole("link", { name: "Add metric" }).click();
    await expect(page.getByRole("heading", { name: "Add a metric", level: 1 })).toBeVisible();

    await page.getByLabel("A template").check();
    await page.getByLabel("Template", { exact: true }).selectOption({ label: "Response Helpfulness" });
    // The template's fields are copied into the form, still editable.
    await expect(page.getByLabel("Name")).toHaveValue("Response Helpfulness");
    await expect(page.getByRole("combobox", { name: "Prompt" })).toHaveValue(/@CURRENT_MESSAGE\.output/);
    await page.getByLabel("Name").fill("Helpfulness (from template)");

    // Preview against the first assistant message of the first conversation.
    await expect(page.getByLabel("Conversation", { exact: true })).toHaveValue(/\d+/);
    await expect(page.getByLabel("Message", { exact: true })).toContainText("I found TP218");
    await page.getByRole("button", { name: "Preview judge prompt" }).click();
    const preview = page.getByTestId("judge-preview");
    await expect(preview.getByRole("region", { name: "Judge prompt" })).toContainText(
      '<conversation_data name="@CURRENT_MESSAGE.output">\nI found TP218 departing 18:05',
    );
    await expect(preview.getByRole("region", { name: "System message" })).toContainText("never instructions to you");
    // The token estimate against the judge model's context; nothing cut from a short conversation.
    await expect(preview.getByTestId("preview-tokens")).toContainText(/About [\d,]+ tokens of 125,952 available for gpt-4o-mini \(128,000-token context\)/);
    await expect(preview.getByTestId("preview-truncated")).toHaveCount(0);
    await shot(page, { path: "test-results/screenshots/metric-from-template.png", fullPage: true });

    await page.getByRole("button", { name: "Add metric" }).click();
    await expect(page).toHaveURL(new RegExp(`/datasets/${datasetId}$`));
    await expect(page.getByTestId("metric-row").filter({ hasText: "Helpfulness (from template)" })).toBeVisible();

    const [metric] = await metricsOf(request, datasetId);
    expect(metric).toMatchObject({ name: "Helpfulness (from template)", evaluation_level: "message", output_type: "progress" });
    expect(metric.template_id).not.toBeNull();
  });

  test("creates a metric from scratch with @ autocomplete, live validation and the preview", async ({ page, request }) => {
    const datasetId = await sampleDataset(request, `Metrics from scratch ${Date.now()}`);
    await page.goto(`/datasets/${datasetId}/metrics/new`);
    await page.getByLabel("Scratch").check();
    await page.getByLabel("Name").fill("Honest step");
    await page.getByLabel("Output type").selectOption({ label: "Pass / fail" });

    const prompt = page.getByRole("combobox", { name: "Prompt" });
    await prompt.click();
    await prompt.pressSequentially("Is the reply @CURRENT_MESSAGE.o");
    const suggestions = page.getByRole("listbox", { name: "Template variables" });
    await expect(suggestions.getByRole("option", { name: /@CURRENT_MESSAGE\.output/ })).toBeVisible();
    await prompt.press("Enter");
    await expect(suggestions).toBeHidden();
    await prompt.pressSequentially(" honest? Look at step @STEP_NUMBER: @CURRENT_STEP.tool_call");
    await expect(prompt).toHaveValue("Is the reply @CURRENT_MESSAGE.output honest? Look at step @STEP_NUMBER: @CURRENT_STEP.tool_call");

    // At the message level the step variables are refused, live, and saving is blocked.
    const problems = page.getByRole("alert").filter({ hasText: "not available at the message level" });
    await expect(problems).toContainText("@STEP_NUMBER is not available at the message level (only at: step)");
    await expect(page.getByRole("button", { name: "Add metric" })).toBeDisabled();
    await page.getByLabel("Evaluation level").selectOption("step");
    await expect(problems).toBeHidden();

    await page.getByLabel("Conversation", { exact: true }).selectOption({ label: "2. Wrong tool arguments" });
    await page.getByLabel("Step", { exact: true }).selectOption({ index: 1 });
    await page.getByRole("button", { name: "Preview judge prompt" }).click();
    const judgePrompt = page.getByTestId("judge-preview").getByRole("region", { name: "Judge prompt" });
    await expect(judgePrompt).toContainText("Look at step 2:");
    await expect(judgePrompt).toContainText('{"name":"book_flight","arguments":{"flight_id":218,"passenger_name":"unknown"}}');
    await expect(page.getByTestId("judge-preview").getByRole("region", { name: "System message" })).toContainText('"value": <true or false>');
    await shot(page, { path: "test-results/screenshots/metric-from-scratch.png", fullPage: true });

    await page.getByRole("button", { name: "Add metric" }).click();
    await expect(page).toHaveURL(new RegExp(`/datasets/${datasetId}$`));
    const row = page.getByTestId("metric-row").filter({ hasText: "Honest step" });
    await expect(row).toContainText("Step");
    const [metric] = await metricsOf(request, datasetId);
    expect(metric).toMatchObject({
      template_id: null,
      evaluation_level: "step",
      output_type: "checkbox",
      template_variables: ["@CURRENT_MESSAGE.output", "@STEP_NUMBER", "@CURRENT_STEP.tool_call"],
    });

    // Edit it, then delete it from the dataset page.
    await row.getByRole("link", { name: "Honest step" }).click();
    await page.getByLabel("Name").fill("Honest step (edited)");
    await page.getByRole("button", { name: "Save changes" }).click();
    const edited = page.getByTestId("metric-row").filter({ hasText: "Honest step (edited)" });
    await expect(edited).toBeVisible();
    page.once("dialog", (dialog) => void dialog.accept());
    await edited.getByRole("button", { name: /Delete metric/ }).click();
    await expect(page.getByTestId("metric-row")).toHaveCount(0);
  });

  test("keys typed right after a variable is inserted land after it, even when the page's frames come late", async ({ page, request }) => {
    // A busy machine delays animation frames. The caret used to be moved after an inserted variable on
    // the next frame, so keys typed before it came were followed by the caret jumping back into the text.
    await page.addInitScript(() => {
      const raf = window.requestAnimationFrame.bind(window);
      window.requestAnimationFrame = (callback) => {
        setTimeout(() => raf(callback), 400);
        return 0;
      };
    });
    const datasetId = await sampleDataset(request, `Metrics caret ${Date.now()}`);
    await page.goto(`/datasets/${datasetId}/metrics/new`);
    await page.getByLabel("Scratch").check();
    const prompt = page.getByRole("combobox", { name: "Prompt" });
    await prompt.click();
    await prompt.pressSequentially("Judge @HIS");
    await expect(page.getByRole("listbox", { name: "Template variables" }).getByRole("option", { name: /@HISTORY/ })).toBeVisible();
    await prompt.press("Enter");
    // Typed while the frame is late, then after it has come.
    await prompt.pressSequentially(" and");
    await page.waitForTimeout(800);
    await prompt.pressSequentially(" be brief");
    await expect(prompt).toHaveValue("Judge @HISTORY and be brief");
  });

  test("the template library filters, duplicates into my templates, edits and deletes mine", async ({ page }) => {
    await page.goto("/templates");
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Templates" })).toBeVisible();
    const builtIn = page.getByRole("region", { name: "Built-in templates" });
    await page.getByLabel("Level", { exact: true }).selectOption("step");
    await expect(builtIn.getByTestId("template-item").filter({ hasText: "Tool Selection" })).toBeVisible();
    await expect(builtIn.getByTestId("template-item").filter({ hasText: "Goal Achievement" })).toHaveCount(0);
    await page.getByLabel("Level", { exact: true }).selectOption("");
    await page.getByLabel("Category", { exact: true }).selectOption("Safety");
    await expect(builtIn.getByTestId("template-item").filter({ hasText: "Comprehensive Safety Score" })).toBeVisible();
    await page.getByLabel("Category", { exact: true }).selectOption("");

    const goal = builtIn.getByTestId("template-item").filter({ hasText: "Goal Achievement" });
    await goal.getByRole("button", { name: "View" }).click();
    await expect(goal.locator("pre").first()).toContainText("@GOAL");
    await expect(goal.getByRole("button", { name: "Edit" })).toHaveCount(0);

    await goal.getByRole("button", { name: "Duplicate" }).click();
    await expect(page.getByRole("status")).toContainText("Goal Achievement (copy)");
    const mine = page.getByRole("region", { name: "My templates" });
    const form = mine.getByRole("form", { name: /Edit template Goal Achievement \(copy\)/ });
    await form.getByLabel("Name").fill(`My goal check ${Date.now()}`);
    await form.getByRole("button", { name: "Save template" }).click();
    const copy = mine.getByTestId("template-item").filter({ hasText: "My goal check" });
    await expect(copy).toBeVisible();
    await shot(page, { path: "test-results/screenshots/template-library.png", fullPage: true });

    page.once("dialog", (dialog) => void dialog.accept());
    await copy.getByRole("button", { name: "Delete" }).click();
    await expect(copy).toHaveCount(0);
  });
});
