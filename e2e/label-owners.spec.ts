/**
 * Labels are their owner's (issue 34.3): two annotators, each signed in with a key of their own, label the
 * same cells in the review queue. Each sees their own label as theirs and the other's by name, "labelled"
 * counts their own verdicts only (a note without a verdict is not one), and the agreement page shows the
 * two people's κ on the cells both labelled. On the sign-in server (API_TOKEN set), where keys matter.
 */
import { expect, test, type Browser, type Page } from "@playwright/test";
import { guardedURL as guarded, shot } from "./workspace-helpers";

const admin = { authorization: "Bearer e2e-token-for-the-guarded-server" };

const file = JSON.stringify({
  conversations: Array.from({ length: 4 }, (_, i) => ({
    name: `Task ${i + 1}`,
    messages: [
      { role: "user", content: `Please do task ${i + 1}.` },
      { role: "assistant", content: `Task ${i + 1} is done.` },
    ],
  })),
});

async function signedIn(browser: Browser, key: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${guarded}/signin`);
  await page.getByLabel("API key").fill(key);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
  return page;
}

// @store-independent: keeping two people's labels apart and their agreement pair by pair are
// app/api/agreement/annotators/annotators.test.ts on both stores, sessions and keys auth.spec.ts and the users tests; how the
// queue and the agreement page show them is the pages'.
test("two annotators label the same cells: each sees their own label as theirs and the other's by name; κ between them", { tag: "@store-independent" }, async ({ browser, request }) => {
  const stamp = Date.now() % 100000;
  const imported = await request.post(`${guarded}/api/datasets/import`, {
    headers: admin,
    multipart: { file: { name: "tasks.json", mimeType: "application/json", buffer: Buffer.from(file) }, name: `Two annotators ${stamp}`, get_feedback: "false" },
  });
  expect(imported.status(), await imported.text()).toBe(201);
  const datasetId = ((await imported.json()) as { dataset_id: number }).dataset_id;
  const metric = await request.post(`${guarded}/api/evaluation-pipeline-nodes`, {
    headers: admin,
    data: { dataset_id: datasetId, name: "Solved", evaluation_level: "conversation", prompt: "Was the task solved? @HISTORY", output_type: "checkbox" },
  });
  expect(metric.status(), await metric.text()).toBe(201);
  const metricId = ((await metric.json()) as { id: number }).id;
  const keys: Record<string, string> = {};
  const names = { alice: `alice${stamp}`, bob: `bob${stamp}` };
  for (const name of Object.values(names)) {
    const user = await request.post(`${guarded}/api/users`, { headers: admin, data: { name, role: "annotator" } });
    expect(user.status(), await user.text()).toBe(201);
    const key = await request.post(`${guarded}/api/users/${((await user.json()) as { id: number }).id}/keys`, { headers: admin, data: {} });
    expect(key.status(), await key.text()).toBe(201);
    keys[name] = ((await key.json()) as { key: string }).key;
  }
  const queue = `${guarded}/datasets/${datasetId}/review?metric=${metricId}`;

  // Alice: pass on task 1, fail on task 2.
  const alice = await signedIn(browser, keys[names.alice]);
  await alice.goto(queue);
  await expect(alice.getByTestId("review-title")).toHaveText("Task 1");
  await expect(alice.getByTestId("review-others")).toContainText("No one else has labelled this cell.");
  await alice.getByRole("button", { name: "Pass (p)" }).click();
  await expect(alice.getByTestId("review-title")).toHaveText("Task 2");
  await alice.getByRole("button", { name: "Fail (f)" }).click();
  await expect(alice.getByTestId("review-labelled")).toHaveText("2");

  // Bob sees alice's labels as hers, none as his; his own labels do not replace hers.
  const bob = await signedIn(browser, keys[names.bob]);
  await bob.goto(queue);
  await expect(bob.getByTestId("review-title")).toHaveText("Task 1");
  await expect(bob.getByText(`Your label (${names.bob})`)).toBeVisible();
  await expect(bob.getByTestId("review-label")).toHaveText("none");
  await expect(bob.getByTestId("review-labelled")).toHaveText("0");
  // Others' labels are hidden until bob gives his own (they would steer it), unless he asks to see them.
  await expect(bob.getByTestId("review-others-hidden")).toContainText("1 label by others, hidden until you label this cell");
  await expect(bob.getByTestId("review-others").locator(`[data-user="${names.alice}"]`)).toHaveCount(0);
  await bob.getByRole("button", { name: "Show them" }).click();
  await expect(bob.getByTestId("review-others").locator(`[data-user="${names.alice}"]`)).toHaveText(`${names.alice}: pass`);
  await bob.getByRole("button", { name: "Fail (f)" }).click();
  await expect(bob.getByTestId("review-title")).toHaveText("Task 2");
  // The toast names the cell saved and the one now on screen.
  await expect(bob.getByRole("status")).toContainText("Saved fail for Task 1 · now on “Task 2”");
  await expect(bob.getByTestId("review-others-hidden")).toBeVisible();
  await bob.getByRole("button", { name: "Fail (f)" }).click();
  await bob.keyboard.press("k");
  await expect(bob.getByTestId("review-title")).toHaveText("Task 2");
  // Labelled by him now: alice's label is shown beside his.
  await expect(bob.getByTestId("review-others").locator(`[data-user="${names.alice}"]`)).toHaveText(`${names.alice}: fail`);
  await bob.keyboard.press("j");
  await expect(bob.getByTestId("review-title")).toHaveText("Task 3");
  // A note without a verdict is not a label: the count stays at 2.
  await bob.getByLabel("Note (n)").fill("Cannot tell from the transcript.");
  await bob.getByLabel("Note (n)").press("Enter");
  await expect(bob.getByRole("status")).toContainText("with note");
  await expect(bob.getByTestId("review-label")).toHaveText("none (a note only)");
  await expect(bob.getByTestId("review-labelled")).toHaveText("2");
  await shot(bob, { path: "test-results/screenshots/label-owners-bob.png", fullPage: true });

  // Alice again: her labels are still hers, bob's are shown by name beside them.
  await alice.goto(queue);
  await expect(alice.getByTestId("review-title")).toHaveText("Task 1");
  await expect(alice.getByTestId("review-label")).toHaveText("pass");
  await expect(alice.getByTestId("review-others").locator(`[data-user="${names.bob}"]`)).toHaveText(`${names.bob}: fail`);
  await expect(alice.getByTestId("review-labelled")).toHaveText("2");
  await alice.keyboard.press("j");
  await alice.keyboard.press("j");
  await expect(alice.getByTestId("review-title")).toHaveText("Task 3");
  await expect(alice.getByTestId("review-label")).toHaveText("none");
  // Not labelled by her: bob's note is hidden until she labels it or asks to see it.
  await expect(alice.getByTestId("review-others-hidden")).toBeVisible();
  await alice.getByRole("button", { name: "Show them" }).click();
  await expect(alice.getByTestId("review-others").locator(`[data-user="${names.bob}"]`)).toContainText("no verdict");
  await shot(alice, { path: "test-results/screenshots/label-owners-alice.png", fullPage: true });

  // The agreement page: each person's count, and κ between the two on the two cells both labelled.
  // alice pass, fail; bob fail, fail → po ½, pe ½·0 + ½·1 = ½ → κ 0.
  await alice.goto(`${guarded}/datasets/${datasetId}/agreement?metric=${metricId}`);
  const panel = alice.getByTestId("annotator-agreement");
  await expect(panel.locator(`[data-user="${names.alice}"]`)).toHaveText(`${names.alice}: 2 labelled`);
  await expect(panel.locator(`[data-user="${names.bob}"]`)).toHaveText(`${names.bob}: 2 labelled (+1 note without a verdict)`);
  const pair = panel.locator(`[data-pair="${names.alice}|${names.bob}"]`);
  await expect(pair.locator("td").nth(1)).toHaveText("2");
  await expect(pair.locator("td").nth(2)).toHaveText("0.500");
  await expect(pair.getByTestId("annotator-kappa")).toContainText("0.000");
  // Each person's labels are a source of their own.
  await alice.getByRole("combobox", { name: "Source A (judged)" }).selectOption(`labels:${names.alice}`);
  await alice.getByRole("combobox", { name: "Source B (truth)" }).selectOption(`labels:${names.bob}`);
  await expect(alice.getByTestId("agreement-n")).toHaveText("2");
  // They disagree on one cell, said in the singular.
  await expect(alice.getByText(/^1 cells?$/)).toHaveText("1 cell");
  await panel.scrollIntoViewIfNeeded();
  await shot(alice, { path: "test-results/screenshots/label-owners-agreement.png", fullPage: true });
});
