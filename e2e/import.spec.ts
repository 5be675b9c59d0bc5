import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { shot } from "./workspace-helpers";

const fixtures = path.join(__dirname, "fixtures");
const judge = `http://127.0.0.1:${process.env.E2E_JUDGE_PORT ?? 4010}/__double`;

/** Drop a file on the drop zone the way a browser drag-and-drop does. */
async function dropFile(page: Page, file: string) {
  const text = fs.readFileSync(path.join(fixtures, file), "utf8");
  const transfer = await page.evaluateHandle(
    ({ text, name }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: "application/json" }));
      return dt;
    },
    { text, name: file },
  );
  await page.getByTestId("drop-zone").dispatchEvent("drop", { dataTransfer: transfer });
}

/** Import a fixture of another tool's format from the import page into a new dataset; the success panel. */
async function importFormat(page: Page, file: string, name: string) {
  await page.goto("/import");
  await page.getByLabel("choose a file").setInputFiles(path.join(fixtures, "formats", file));
  await page.getByLabel("Dataset name").fill(`${name} ${Date.now()}`);
  await page.getByRole("button", { name: "Import", exact: true }).click();
  return page.getByTestId("import-success");
}

// @store-independent: the import page's steps; what an import stores (formats, mappings, idempotency) is route tests on both stores.
test.describe("import page", { tag: "@store-independent" }, () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("imports the sample into a new dataset and shows the counts", async ({ page }) => {
    const name = `Imported sample ${Date.now()}`;
    await page.goto("/");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Import" }).click();
    await expect(page.getByRole("heading", { name: "Import conversations", level: 1 })).toBeVisible();

    await page.getByLabel("choose a file").setInputFiles(path.join(fixtures, "sample-dataset.json"));
    await expect(page.getByTestId("chosen-file")).toContainText("sample-dataset.json");
    await page.getByLabel("Dataset name").fill(name);
    await page.getByRole("button", { name: "Import" }).click();

    const success = page.getByTestId("import-success");
    await expect(success).toBeVisible();
    await expect(success.getByRole("status")).toContainText("5 conversations");
    await expect(success.getByRole("status")).toContainText("19 messages");
    await expect(success.getByRole("status")).toContainText("21 steps");
    await expect(success).toContainText("Detected format: Turnscope JSON");
    // The sample's deliberate argument type mismatch is shown as a warning.
    await expect(page.getByTestId("import-warning")).toContainText("Argument 'flight_id' of 'book_flight' is integer, declared string");
    await shot(page, { path: "test-results/screenshots/import-success.png", fullPage: true });

    await success.getByRole("link", { name: "Open dataset →" }).click();
    await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible();
    await expect(page.getByRole("table", { name: "Evaluation grid" }).getByTestId("grid-row")).toHaveCount(5);
    await expect(page.getByText("Flight to Lisbon")).toBeVisible();
  });

  test("a file no format matches: the rules' mapping is previewed on the first conversation, edited, and imported", async ({ page, request }) => {
    await request.post(`${judge}/enqueue`, { data: { kind: "server_error" } });
    await page.goto("/import");
    await page.getByLabel("choose a file").setInputFiles(path.join(fixtures, "formats", "unknown-support.json"));
    await page.getByLabel("Dataset name").fill(`Mapped ${Date.now()}`);
    await page.getByRole("button", { name: "Import", exact: true }).click();

    await expect(page.getByTestId("import-failure")).toContainText("Nothing was imported. 2 errors to fix");
    const editor = page.getByTestId("mapping-editor");
    const preview = editor.getByRole("table", { name: "Mapping preview" });
    await expect(preview.getByRole("row")).toHaveCount(3);
    await expect(preview.getByRole("row").nth(1)).toContainText("user");
    await expect(preview.getByRole("row").nth(1)).toContainText("My card was charged twice.");
    await expect(preview.getByRole("row").nth(2)).toContainText("assistant");
    // Who wrote it and how it scored, tried on the whole file by the server (issue 49.4).
    await expect(editor.getByTestId("mapping-origin")).toContainText("structural reader");
    await expect(editor.getByTestId("mapping-score")).toContainText("Keeps");

    // The person edits the mapping: the ticket becomes the name; a bad edit is said before anything is sent.
    const box = editor.getByLabel("Mapping", { exact: true });
    await box.fill("{");
    await expect(editor.getByTestId("mapping-problem")).toContainText("not valid JSON");
    await expect(editor.getByRole("button", { name: "Import with this mapping" })).toBeDisabled();
    await box.fill(JSON.stringify({ messages: "dialogue_turns", role: "speaker", content: "utterance", roles: { customer: "user", bot: "assistant" }, name: "ticket" }));
    await expect(preview.getByRole("row")).toHaveCount(3);
    // Saved under a name for the next file of this shape.
    const savedName = `Support export ${Date.now()}`;
    await editor.getByLabel("Save this mapping as").fill(savedName);
    await editor.getByRole("button", { name: "Save mapping" }).click();
    await expect(editor.getByTestId("save-mapping").getByRole("status")).toContainText(`Saved “${savedName}”`);
    await editor.getByRole("button", { name: "Import with this mapping" }).click();

    const success = page.getByTestId("import-success");
    await expect(success).toContainText("Detected format: Your mapping");
    await expect(success.getByRole("status")).toContainText("2 conversations");
    await expect(success.getByRole("status")).toContainText("3 messages");
    await shot(page, { path: "test-results/screenshots/import-mapping.png", fullPage: true });
    const href = await success.getByRole("link", { name: "Open dataset →" }).getAttribute("href");
    const datasetId = Number(/\/datasets\/(\d+)$/.exec(href ?? "")?.[1]);
    const conversations = (await (await request.get(`/api/datasets/${datasetId}/conversations`)).json()) as Array<{ id: number; name: string; meta: unknown }>;
    expect(conversations.map((c) => c.name)).toEqual(["T-1", "T-2"]);
    const full = (await (await request.get(`/api/conversations/${conversations[0].id}`)).json()) as { meta: unknown; messages: Array<{ role: string; content: string }> };
    expect(full.meta).toEqual({ label: "resolved" });
    expect(full.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "My card was charged twice."],
      ["assistant", "I see two charges; I have refunded one of them."],
    ]);

    // The next file of the same shape: read with the saved mapping straight away, no refusal first.
    await page.goto("/import");
    await page.getByLabel("choose a file").setInputFiles(path.join(fixtures, "formats", "unknown-support.json"));
    await page.getByLabel("Dataset name").fill(`Mapped again ${Date.now()}`);
    await page.getByLabel("Read the file with").selectOption({ label: savedName });
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const reused = page.getByTestId("import-success");
    await expect(reused).toContainText("Detected format: Your mapping");
    await expect(reused.getByRole("status")).toContainText("2 conversations");
    const reusedHref = await reused.getByRole("link", { name: "Open dataset →" }).getAttribute("href");
    const reusedId = Number(/\/datasets\/(\d+)$/.exec(reusedHref ?? "")?.[1]);
    const reusedConversations = (await (await request.get(`/api/datasets/${reusedId}/conversations`)).json()) as Array<{ name: string }>;
    expect(reusedConversations.map((c) => c.name)).toEqual(["T-1", "T-2"]);

    // The feedback's judge call (refused by the double above) is counted where the Settings page reads it.
    await page.goto("/settings");
    await expect(page.getByTestId("judge-import-feedback-usage")).not.toContainText(/^0 calls/);

    // And as the starting point of the editor when a file is refused.
    await request.post(`${judge}/enqueue`, { data: { kind: "server_error" } });
    await page.goto("/import");
    await page.getByLabel("choose a file").setInputFiles(path.join(fixtures, "formats", "unknown-support.json"));
    await page.getByLabel("Dataset name").fill(`Mapped from editor ${Date.now()}`);
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const editorAgain = page.getByTestId("mapping-editor");
    await editorAgain.getByLabel("Start from a saved mapping").selectOption({ label: savedName });
    await expect(editorAgain.getByLabel("Mapping", { exact: true })).toHaveValue(/"name": "ticket"/);
  });

  test("imports an OpenAI request body as it is, names the format, and lists the text it did not store", async ({ page, request }) => {
    const success = await importFormat(page, "openai-request.json", "OpenAI sample");
    await expect(success).toContainText("Detected format: OpenAI chat messages");
    await expect(success.getByRole("status")).toContainText("5 messages");
    await expect(page.getByTestId("not-imported")).toContainText("39 characters in messages[].content[].image_url.url");
    const href = await success.getByRole("link", { name: "Open dataset →" }).getAttribute("href");
    const datasetId = Number(/\/datasets\/(\d+)$/.exec(href ?? "")?.[1]);
    const [conversation] = (await (await request.get(`/api/datasets/${datasetId}/conversations`)).json()) as Array<{ id: number }>;
    const full = (await (await request.get(`/api/conversations/${conversation.id}`)).json()) as { messages: Array<{ role: string; content: string }> };
    expect(full.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant"]);
    expect(full.messages[2].content).toBe("It is sunny in Boston today, 22 °C.");
  });

  test("smolagents memory steps: the copies of the model's input are listed apart from lost text, with their reason", async ({ page }) => {
    const success = await importFormat(page, "smolagents-memory.json", "smolagents memory");
    await expect(success).toContainText("Detected format: smolagents memory steps");
    await expect(success.getByRole("status")).toContainText("3 messages");
    const copies = page.getByTestId("copies");
    await expect(copies).toContainText("Copies of text stored from elsewhere in the file, not stored twice");
    await expect(copies).toContainText("steps[].model_input_messages[].content: what the model was sent at each step");
    await expect(page.getByText("Text in the file that was not imported")).toHaveCount(0);
    await expect(page.getByTestId("reserialised")).toHaveCount(0);
  });

  test("shows every error of an invalid file with its path, message, suggestion and the feedback", async ({ page, request }) => {
    // The judge model fails; the page still gets the rules' feedback and its transformation.
    await request.post(`${judge}/enqueue`, { data: { kind: "server_error" } });
    await page.goto("/import");
    await page.getByLabel("choose a file").setInputFiles(path.join(fixtures, "invalid-roles.json"));
    await page.getByLabel("Dataset name").fill(`Never created ${Date.now()}`);
    await page.getByRole("button", { name: "Import" }).click();

    const failure = page.getByTestId("import-failure");
    await expect(failure).toContainText("The file does not match the import format");
    await expect(failure).toContainText("Nothing was imported. 4 errors to fix");
    // Four bad roles, two faults: one row per fault, naming every place.
    const errors = page.getByTestId("import-error");
    await expect(errors).toHaveCount(2);
    await expect(errors.nth(1)).toContainText("conversations[0].messages[1,3].role");
    await expect(errors.nth(1)).toContainText("2 messages: Invalid role value: 'bot'");
    await expect(errors.nth(1)).toContainText("Use 'assistant' instead of 'bot'");

    const feedback = page.getByTestId("import-feedback");
    await expect(feedback).toContainText("From Turnscope's rules");
    await expect(feedback).toContainText("'bot' → 'assistant'");
    const mapping = page.getByRole("table", { name: "Value mapping" });
    await expect(mapping.getByRole("row", { name: "bot assistant" })).toBeVisible();
    await expect(mapping.getByRole("row", { name: "human user" })).toBeVisible();
    await expect(page.getByTestId("suggested-transformation")).toContainText("conversations[].messages[].role");
    await shot(page, { path: "test-results/screenshots/import-failure.png", fullPage: true });

    const datasets = (await (await request.get("/api/datasets?limit=500")).json()) as Array<{ name: string }>;
    expect(datasets.some((d) => d.name.startsWith("Never created"))).toBe(false);
  });

  test("applies the suggested fix to the refused file and ends with an imported dataset", async ({ page, request }) => {
    // The judge model fails, so the rules' deterministic transformation is the one offered.
    await request.post(`${judge}/enqueue`, { data: { kind: "server_error" } });
    const name = `Fixed roles ${Date.now()}`;
    await page.goto("/import");
    await page.getByLabel("choose a file").setInputFiles(path.join(fixtures, "invalid-roles.json"));
    await page.getByLabel("Dataset name").fill(name);
    await page.getByRole("button", { name: "Import", exact: true }).click();

    await expect(page.getByTestId("import-failure")).toContainText("Nothing was imported. 4 errors to fix");
    await expect(page.getByTestId("import-error")).toHaveCount(2);
    const fix = page.getByTestId("apply-fix");
    await expect(fix).toContainText("The fix replaces 4 values.");
    await expect(fix).toContainText("invalid-roles.fixed.json");

    // The fixed file can be looked at first: the download is the file that will be imported.
    const [download] = await Promise.all([page.waitForEvent("download"), fix.getByRole("button", { name: "Download the fixed file" }).click()]);
    expect(download.suggestedFilename()).toBe("invalid-roles.fixed.json");
    const downloaded = JSON.parse(fs.readFileSync(await download.path(), "utf8")) as { conversations: Array<{ messages: Array<{ role: string }> }> };
    expect(downloaded.conversations[0].messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);

    await fix.getByRole("button", { name: "Apply the suggested fix and import" }).click();
    const success = page.getByTestId("import-success");
    await expect(success.getByRole("status").getByText("1 conversation", { exact: true })).toBeVisible();
    await expect(success.getByRole("status")).toContainText("4 messages");
    await expect(success.getByRole("status")).toContainText(`New dataset “${name}”`);
    await expect(page.getByTestId("fix-applied")).toContainText("Imported with the suggested fix applied to invalid-roles.json");
    await expect(page.getByTestId("chosen-file")).toContainText("invalid-roles.fixed.json");
    await shot(page, { path: "test-results/screenshots/import-fixed.png", fullPage: true });

    const href = await success.getByRole("link", { name: "Open dataset →" }).getAttribute("href");
    const datasetId = Number(/\/datasets\/(\d+)$/.exec(href ?? "")?.[1]);
    expect(datasetId).toBeGreaterThan(0);
    const conversations = (await (await request.get(`/api/datasets/${datasetId}/conversations`)).json()) as Array<{ id: number; name: string }>;
    expect(conversations.map((c) => c.name)).toEqual(["legacy export"]);
    const conversation = (await (await request.get(`/api/conversations/${conversations[0].id}`)).json()) as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(conversation.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(conversation.messages[1].content).toBe("hello! how can I help?");
  });

  test("says so when the fixed file is still refused", async ({ page, request }) => {
    await request.post(`${judge}/enqueue`, { data: { kind: "server_error" } });
    await page.goto("/import");
    await page.getByLabel("choose a file").setInputFiles(path.join(fixtures, "invalid-missing-role.json"));
    await page.getByLabel("Dataset name").fill(`Never created either ${Date.now()}`);
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await expect(page.getByTestId("import-error")).toHaveCount(2);

    // The speaker rename fixes one message; the message with no role at all is left for a person.
    await request.post(`${judge}/enqueue`, { data: { kind: "server_error" } });
    await page.getByRole("button", { name: "Apply the suggested fix and import" }).click();
    await expect(page.getByTestId("fix-still-fails")).toContainText("the fixed file was refused too");
    await expect(page.getByTestId("import-error")).toHaveCount(1);
    await expect(page.getByTestId("import-error")).toContainText("conversations[0].messages[1].role");
    await expect(page.getByTestId("apply-fix")).toHaveCount(0);
  });

  test("drag-and-drop into an existing dataset, with the judge model's feedback on a syntax error", async ({ page, request }) => {
    const created = await request.post("/api/datasets", { data: { name: `Drop target ${Date.now()}` } });
    const dataset = (await created.json()) as { id: number; name: string };
    await request.post(`${judge}/enqueue`, {
      data: {
        kind: "verdict",
        body: { analysis: "A trailing comma closes the messages array.", transformation: null },
      },
    });

    await page.goto(`/datasets/${dataset.id}`);
    await page.getByRole("link", { name: "Import conversations" }).click();
    await expect(page.getByLabel("An existing dataset")).toBeChecked();
    await expect(page.getByLabel("Dataset", { exact: true })).toHaveValue(String(dataset.id));

    await dropFile(page, "invalid-syntax.json");
    await expect(page.getByTestId("chosen-file")).toContainText("invalid-syntax.json");
    await page.getByRole("button", { name: "Import" }).click();

    await expect(page.getByTestId("import-failure")).toContainText("The file is not valid JSON");
    await expect(page.getByTestId("import-error")).toContainText("Invalid JSON: Trailing comma before ']' at line 1, column 71");
    await expect(page.getByTestId("import-error")).toContainText("line 1, column 71");
    await expect(page.getByTestId("import-feedback")).toContainText("A trailing comma closes the messages array.");
    await expect(page.getByTestId("import-feedback")).toContainText("From the judge model");

    // Then the valid sample, dropped on the same page, goes into that dataset.
    await dropFile(page, "sample-dataset.json");
    await page.getByRole("button", { name: "Import" }).click();
    await expect(page.getByTestId("import-success").getByRole("status")).toContainText("5 conversations");
    const after = (await (await request.get(`/api/datasets/${dataset.id}`)).json()) as { conversation_count: number };
    expect(after.conversation_count).toBe(5);
  });
});
