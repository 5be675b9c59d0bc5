/**
 * Roles in the page (issue 34.4): a viewer, signed in with a key of their own, sees no enabled write control
 * on the pages a team uses — each is disabled with a title saying why (or is not a control at all) — and
 * the viewer's review queue shows the metric's reference as it reads, not "none" beside "they disagree".
 * On the sign-in server (API_TOKEN set). And in the one-person mode, the People page's "Add yourself as an
 * admin" form offers the admin role first.
 */
import { expect, test, type Page } from "@playwright/test";
import { guardedURL as guarded, runCompleted, shot } from "./workspace-helpers";

const admin = { authorization: "Bearer e2e-token-for-the-guarded-server" };
const why = /^Needs the annotator role: you are signed in as viewer\d+, a viewer$/;
/** What a button may be called and still be enabled for a viewer: it reads, navigates or only changes this page. */
const writes = /run|retry|add|import|save|delete|create|new |new$|label|pass|fail|start|cancel|test connection|duplicate|edit|pause|resume/i;

const file = JSON.stringify({
  conversations: [1, 0, 1].map((reward, i) => ({
    name: `Trip ${i + 1}`,
    meta: { reward },
    messages: [
      { role: "user", content: `Book trip ${i + 1}.` },
      { role: "assistant", content: `Trip ${i + 1} is booked. [[judge-double:verdict {"value":true,"reasoning":"Booked."}]]` },
    ],
  })),
});

/** Every enabled button on the page whose name says it writes: there must be none. */
async function enabledWriteButtons(page: Page): Promise<string[]> {
  const names = await page.getByRole("button").evaluateAll((els) =>
    els.filter((el) => !(el as HTMLButtonElement).disabled && (el as HTMLElement).offsetParent !== null).map((el) => (el.getAttribute("aria-label") ?? el.textContent ?? "").trim()),
  );
  // Exports only read ("Export run #1").
  return names.filter((n) => writes.test(n) && !/^export/i.test(n));
}

// @store-independent: what the store holds here — the viewer's key, session and role, and the 403 a viewer's label gets — is
// app/api/roles.test.ts and app/api/users tests on both stores, and sign-in itself runs on both (auth.spec.ts); which controls a
// role sees disabled is the page's.
test("a viewer sees no enabled write control, each says why; the viewer's queue reads the reference", { tag: "@store-independent" }, async ({ page, request }) => {
  const stamp = Date.now() % 100000;
  const imported = await request.post(`${guarded}/api/datasets/import`, {
    headers: admin,
    multipart: { file: { name: "trips.json", mimeType: "application/json", buffer: Buffer.from(file) }, name: `Viewer ${stamp}`, get_feedback: "false" },
  });
  expect(imported.status(), await imported.text()).toBe(201);
  const datasetId = ((await imported.json()) as { dataset_id: number }).dataset_id;
  const metric = await request.post(`${guarded}/api/evaluation-pipeline-nodes`, {
    headers: admin,
    data: {
      dataset_id: datasetId,
      name: "Booked",
      evaluation_level: "conversation",
      prompt: "Was the trip booked? @HISTORY",
      output_type: "checkbox",
      reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } },
    },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  const metricId = ((await metric.json()) as { id: number }).id;
  const run = await request.post(`${guarded}/api/evaluation-pipeline-executions/run`, { headers: admin, data: { dataset_id: datasetId, pipeline_node_id: metricId } });
  expect(run.status()).toBe(202);
  const runId = ((await run.json()) as { id: number }).id;
  await runCompleted(request, runId, { base: guarded, headers: admin });
  const user = await request.post(`${guarded}/api/users`, { headers: admin, data: { name: `viewer${stamp}`, role: "viewer" } });
  expect(user.status()).toBe(201);
  const key = await request.post(`${guarded}/api/users/${((await user.json()) as { id: number }).id}/keys`, { headers: admin, data: {} });
  const viewerKey = ((await key.json()) as { key: string }).key;

  await page.goto(`${guarded}/signin`);
  await page.getByLabel("API key").fill(viewerKey);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("signed-in-as")).toHaveText(`viewer${stamp} · viewer`);

  // The workspace: run controls, Add metric, the cells and rows — disabled, saying why.
  await page.goto(`${guarded}/datasets/${datasetId}`);
  const toolbar = page.getByRole("toolbar", { name: "Run controls" });
  for (const name of ["▶ Run all", "↻ Retry failed", "Add metric"]) {
    const control = toolbar.getByRole("button", { name });
    await expect(control, name).toBeDisabled();
    await expect(control, name).toHaveAttribute("title", why);
  }
  const row = page.getByTestId("grid-row").first();
  await row.hover();
  await expect(row.getByRole("button", { name: /^Run every metric on/ })).toBeDisabled();
  await expect(page.getByRole("button", { name: /column actions$/ }).first()).toBeEnabled();
  await page.getByRole("button", { name: "Booked column actions" }).click();
  await expect(page.getByRole("menuitem", { name: "▶ Run column" })).toBeDisabled();
  await expect(page.getByRole("menuitem", { name: "↻ Retry failed in column" })).toBeDisabled();
  await page.keyboard.press("Escape");
  expect(await enabledWriteButtons(page)).toEqual([]);
  await expect(page.getByText("Add metric", { exact: true }).last()).toHaveAttribute("title", why);
  await shot(page, { path: "test-results/screenshots/viewer-workspace.png", fullPage: true });

  // Other pages a team uses: no enabled control that writes.
  for (const path of [`/import`, `/`, `/datasets/${datasetId}/metrics/${metricId}`, `/datasets/${datasetId}/metrics/new`, `/datasets/${datasetId}/executions`, `/datasets/${datasetId}/live`, `/templates`, `/settings`]) {
    await page.goto(`${guarded}${path}`);
    await page.waitForSelector("[data-hydrated]", { state: "attached" });
    await expect.poll(async () => enabledWriteButtons(page), { message: path }).toEqual([]);
  }
  await page.goto(`${guarded}/import`);
  await expect(page.getByRole("button", { name: "Import", exact: true })).toHaveAttribute("title", why);

  // The review queue: the reference as it reads (pass for a reward of 1), the label buttons disabled.
  await page.goto(`${guarded}/datasets/${datasetId}/review?metric=${metricId}`);
  await expect(page.getByTestId("review-title")).toHaveText("Trip 1");
  await expect(page.getByTestId("review-reference")).toContainText("pass");
  await expect(page.getByTestId("review-reference")).not.toContainText("none");
  await expect(page.getByRole("button", { name: "Pass (p)" })).toBeDisabled();
  await expect(page.getByTestId("review-readonly")).toContainText("you can read labels but not give them");
  // Trip 2: the judge passes it, the reward (0) fails it — they disagree, and the reference says fail.
  await page.keyboard.press("j");
  await expect(page.getByTestId("review-title")).toHaveText("Trip 2");
  await expect(page.getByTestId("review-reference")).toContainText("fail");
  await expect(page.getByText("The judge and the reference disagree on this cell.")).toBeVisible();
  await page.keyboard.press("p");
  await expect(page.getByRole("alert").filter({ hasText: /\S/ })).toHaveCount(0);
  await shot(page, { path: "test-results/screenshots/viewer-review.png", fullPage: true });
  const labels = await request.get(`${guarded}/api/labels?dataset_id=${datasetId}`, { headers: admin });
  expect(await labels.json()).toEqual([]);
});

// @store-independent: a form's default; no row is read or written.
test("in the one-person mode, the People page's form offers the admin role for yourself", { tag: "@store-independent" }, async ({ page }) => {
  await page.goto("/people");
  await expect(page.getByText("The server is open (one-person mode)")).toBeVisible();
  await expect(page.getByRole("combobox", { name: "Role", exact: true })).toHaveValue("admin");
});
