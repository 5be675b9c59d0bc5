import fs from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { shot } from "./workspace-helpers";

const CONVERSATIONS = 10_000;

function generate(): Buffer {
  const conversations = Array.from({ length: CONVERSATIONS }, (_, i) => ({
    name: `Scale conversation ${i + 1}`,
    messages: [
      { role: "user", content: `Question number ${i + 1}: where is my order?` },
      { role: "assistant", content: `Order ${i + 1} ships tomorrow.` },
    ],
  }));
  return Buffer.from(JSON.stringify({ conversations }));
}

/** Figures are recorded for people (bench/results.json, git-ignored); nothing here asserts a timing. */
function recordBench(figures: Record<string, unknown>) {
  const file = path.join(__dirname, "..", "bench", "results.json");
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const current = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>) : {};
    fs.writeFileSync(file, JSON.stringify({ ...current, grid_open_10k: figures }, null, 2) + "\n");
  } catch {
    // A benchmark note must never fail the test.
  }
}

// @store-independent: the grid's virtual scrolling over pages of rows; the grid API's paging and order are route tests on both stores.
test("a 10,000-conversation dataset opens with rows at once and pages in more as it scrolls", { tag: "@store-independent" }, async ({ page, request }) => {
  test.setTimeout(180_000);
  const created = await request.post("/api/datasets", { data: { name: `Scale 10k ${Date.now()}` } });
  const { id } = (await created.json()) as { id: number };
  const imported = await request.post(`/api/datasets/${id}/import`, {
    multipart: { file: { name: "scale.json", mimeType: "application/json", buffer: generate() }, get_feedback: "false" },
    timeout: 120_000,
  });
  expect(imported.status(), await imported.text()).toBe(200);
  const templates = (await (await request.get("/api/metric-templates")).json()) as Array<{ id: number; name: string }>;
  await request.post("/api/evaluation-pipeline-nodes", {
    data: { dataset_id: id, template_id: templates.find((t) => t.name === "Task Completion")!.id },
  });

  const gridPages: string[] = [];
  page.on("request", (r) => {
    if (r.url().includes(`/api/datasets/${id}/grid`)) gridPages.push(new URL(r.url()).search);
  });
  const started = Date.now();
  await page.goto(`/datasets/${id}`);
  const grid = page.getByRole("table", { name: "Evaluation grid" });
  await expect(grid.getByTestId("grid-row").first()).toContainText("Scale conversation 1");
  const firstRowMs = Date.now() - started;
  await expect(grid).toHaveAttribute("aria-rowcount", String(CONVERSATIONS + 1));
  // Virtualised: only a screenful of rows exists in the DOM.
  expect(await grid.locator("[role=row]").count()).toBeLessThan(120);
  // The first page came with the HTML: no grid request was needed to show it.
  expect(gridPages).toEqual([]);

  const scroller = page.getByTestId("grid-scroller");
  const scrollStarted = Date.now();
  await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
  await expect(grid.getByTestId("grid-row").filter({ hasText: /Scale conversation (49|50)\d\d\b/ }).first()).toBeVisible();
  await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
  await expect(grid.getByTestId("grid-row").filter({ hasText: "Scale conversation 10000" })).toBeVisible();
  const scrollMs = Date.now() - scrollStarted;
  // Only the pages scrolled to were fetched, not the whole dataset.
  expect(gridPages.length).toBeGreaterThanOrEqual(2);
  expect(gridPages.length).toBeLessThanOrEqual(6);
  expect(gridPages.every((q) => q.includes("limit=100"))).toBe(true);
  await shot(page, { path: "test-results/screenshots/grid-10k-bottom.png" });

  recordBench({
    conversations: CONVERSATIONS,
    first_row_visible_ms: firstRowMs,
    scroll_middle_and_end_ms: scrollMs,
    grid_requests: gridPages.length,
    measured_at: new Date().toISOString(),
  });
});
