/** Shared steps of the workspace specs: datasets and metrics through the public API, the judge double. */
import fs from "node:fs";
import path from "node:path";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";

export const fixtures = path.join(__dirname, "fixtures");
export const judge = `http://127.0.0.1:${process.env.E2E_JUDGE_PORT ?? 4010}/__double`;
/** The pass's sign-in server (API_TOKEN set; playwright.config.ts), shared by every worker. */
export const guardedURL = process.env.E2E_GUARDED_URL ?? `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 3210) + 2}`;

export type Execution = {
  id: number;
  status: string;
  total_evaluations: number;
  successful_evaluations: number;
  meta: { model: string | null; execution_mode: string; batch_size: number };
};

/** A new dataset with a fixture file imported into it, as a script would do it. */
export async function importFixture(request: APIRequestContext, file: string, name: string): Promise<number> {
  const created = await request.post("/api/datasets", { data: { name } });
  expect(created.status()).toBe(201);
  const { id } = (await created.json()) as { id: number };
  const imported = await request.post(`/api/datasets/${id}/import`, {
    multipart: {
      file: { name: file, mimeType: "application/json", buffer: fs.readFileSync(path.join(fixtures, file)) },
      get_feedback: "false",
    },
  });
  expect(imported.status(), await imported.text()).toBe(200);
  return id;
}

/** Add system templates to a dataset as metrics (columns), by name. */
export async function addSystemMetrics(request: APIRequestContext, datasetId: number, names: string[]): Promise<number[]> {
  const templates = (await (await request.get("/api/metric-templates")).json()) as Array<{ id: number; name: string; is_system: boolean }>;
  const ids: number[] = [];
  for (const name of names) {
    const template = templates.find((t) => t.is_system && t.name === name);
    expect(template, `system template ${name}`).toBeTruthy();
    const res = await request.post("/api/evaluation-pipeline-nodes", { data: { dataset_id: datasetId, template_id: template!.id } });
    expect(res.status(), await res.text()).toBe(201);
    ids.push(((await res.json()) as { id: number }).id);
  }
  return ids;
}

export async function latestExecutions(request: APIRequestContext, datasetId: number): Promise<Execution[]> {
  return (await (await request.get(`/api/evaluation-pipeline-executions?dataset_id=${datasetId}`)).json()) as Execution[];
}

/**
 * Wait for a run to end `completed`. The limit is generous on purpose: npm test runs the browser passes beside
 * each other on 2 cores (load 10–20), where a small run that takes a second alone took over 20 s; what a spec
 * asserts is the outcome, not how fast it came (the benchmarks measure that).
 */
export async function runCompleted(request: APIRequestContext, id: number, opts: { base?: string; headers?: Record<string, string>; timeout?: number } = {}): Promise<void> {
  await expect
    .poll(async () => ((await (await request.get(`${opts.base ?? ""}/api/evaluation-pipeline-executions/${id}`, { headers: opts.headers })).json()) as { status: string }).status, {
      timeout: opts.timeout ?? 90_000,
      intervals: [250, 500, 1000],
    })
    .toBe("completed");
}

/**
 * Record, in the page, every state each grid cell shows (`empty`, `pending`, `processing`,
 * `completed`, `failed`) in order, so a test can prove cells changed live rather than on reload.
 */
export async function recordCellStates(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: Record<string, string[]> = {};
    const record = (el: Element) => {
      const key = el.getAttribute("data-cell");
      const state = el.getAttribute("data-state");
      if (!key || !state) return;
      const list = (seen[key] ??= []);
      if (list[list.length - 1] !== state) list.push(state);
    };
    document.querySelectorAll("[data-testid=grid-cell]").forEach(record);
    new MutationObserver((mutations) => {
      for (const m of mutations) {
        if (m.type === "attributes" && m.target instanceof Element) record(m.target);
        m.addedNodes.forEach((n) => {
          if (!(n instanceof Element)) return;
          if (n.matches("[data-testid=grid-cell]")) record(n);
          n.querySelectorAll("[data-testid=grid-cell]").forEach(record);
        });
      }
    }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-state"] });
    Object.assign(window, { __cellStates: seen, __noReload: true });
  });
}

export async function recordedCellStates(page: Page): Promise<{ states: Record<string, string[]>; reloaded: boolean }> {
  return page.evaluate(() => {
    const w = window as unknown as { __cellStates?: Record<string, string[]>; __noReload?: boolean };
    return { states: w.__cellStates ?? {}, reloaded: w.__noReload !== true };
  });
}

/**
 * A screenshot for people to look at (test-results/screenshots/). E2E_SCREENSHOTS=0 takes none: npm test's
 * PostgreSQL pass, whose pages are the SQLite pass's (a full-page capture costs the browser a PNG encode).
 */
export async function shot(page: Page, options: { path: string; fullPage?: boolean }): Promise<void> {
  if (process.env.E2E_SCREENSHOTS === "0") return;
  await page.screenshot(options);
}

/**
 * Opens /docs and waits until Swagger UI lists `operationPath`. Its first render parses a 1.4 MB bundle and
 * the whole ~290 KB document: 3–4 s on a quiet machine, over 30 s in a browser pass at load 15–20. What the
 * caller checks is that it renders, not how fast, so the wait is bounded by the test's own limit, which
 * this makes the slow one (three times the configured limit).
 */
export async function openApiReference(page: Page, operationPath: string) {
  test.slow();
  await page.goto("/docs");
  await expect(page.getByRole("heading", { name: "API reference" })).toBeVisible();
  const ui = page.locator(".swagger-ui");
  await expect(ui.getByText(operationPath).first()).toBeVisible({ timeout: 0 });
  return ui;
}

/** Import `conversations` (the JSON format) as a new dataset named `name`; its id and its conversations' ids, in order. */
export async function importConversations(request: APIRequestContext, name: string, conversations: unknown[]): Promise<{ id: number; conversationIds: number[] }> {
  const res = await request.post("/api/datasets/import", {
    multipart: { file: { name: "c.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify({ conversations })) }, name, get_feedback: "false" },
  });
  expect(res.status(), await res.text()).toBe(201);
  const id = ((await res.json()) as { dataset_id: number }).dataset_id;
  const list = (await (await request.get(`/api/datasets/${id}/conversations?limit=50`)).json()) as Array<{ id: number }>;
  return { id, conversationIds: list.map((c) => c.id) };
}

/** A two-message refund chat, numbered `i`, answering `answer`. */
export const chat = (i: number, answer: string, meta?: Record<string, unknown>) => ({
  name: `Refund question ${i}`,
  ...(meta ? { meta } : {}),
  messages: [
    { role: "user", content: `How do I get a refund for order ${i}?` },
    { role: "assistant", content: answer },
  ],
});
