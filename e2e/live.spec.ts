import { expect, test, type APIRequestContext } from "@playwright/test";
import { addSystemMetrics, judge, shot } from "./workspace-helpers";

/** The Live page fills as an agent's OTLP spans arrive, and the online rule judges each finished conversation. */

let seq = 0;
const hex = (n: number, len: number) => n.toString(16).padStart(len, "0");
const text = (role: string, content: string) => ({ role, parts: [{ type: "text", content }] });

/** One chat span in OTLP JSON, carrying the conversation's whole history, as GenAI instrumentations send it. */
function chatSpan(key: string, history: unknown[], answer: string) {
  const start = BigInt(Date.now()) * BigInt(1_000_000) + BigInt(++seq);
  const attr = (k: string, v: string) => ({ key: k, value: { stringValue: v } });
  return {
    traceId: hex(Date.now() * 1000 + ++seq, 32),
    spanId: hex(Date.now() * 1000 + ++seq, 16),
    name: "chat demo-model",
    kind: 3,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + BigInt(400_000_000)).toString(),
    attributes: [
      attr("gen_ai.operation.name", "chat"),
      attr("gen_ai.request.model", "demo-model"),
      attr("gen_ai.conversation.id", key),
      attr("gen_ai.input.messages", JSON.stringify(history)),
      attr("gen_ai.output.messages", JSON.stringify([{ ...text("assistant", answer), finish_reason: "stop" }])),
    ],
    status: {},
  };
}

async function exportSpans(request: APIRequestContext, dataset: string, spans: unknown[]) {
  const res = await request.post("/api/otel/v1/traces", {
    headers: { "content-type": "application/json" },
    data: {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "support-agent" } }, { key: "turnscope.dataset", value: { stringValue: dataset } }] },
          scopeSpans: [{ scope: { name: "e2e" }, spans }],
        },
      ],
    },
  });
  expect(res.status(), await res.text()).toBe(200);
  expect(await res.json()).toEqual({});
}

test.describe("Live page", () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("creates a rule, then fills as spans arrive: conversations, judged once finished, again when one grows, and the score chart", async ({ page, request }) => {
    const name = `Live support ${Date.now()}`;
    const created = await request.post("/api/datasets", { data: { name } });
    expect(created.status()).toBe(201);
    const datasetId = ((await created.json()) as { id: number }).id;
    await addSystemMetrics(request, datasetId, ["Task Completion"]);

    // From the dataset's grid to its Live page.
    await page.goto(`/datasets/${datasetId}`);
    await page.getByRole("link", { name: "Live", exact: true }).click();
    await expect(page.getByRole("heading", { name: "Live", level: 1 })).toBeVisible();
    await expect(page.getByText("No live conversations yet")).toBeVisible();
    await expect(page.getByTestId("live-trace-hint")).toContainText(`turnscope.dataset=${name}`);

    // A rule: every conversation, finished after 2 s without a span.
    await page.getByRole("button", { name: "New rule" }).click();
    const form = page.getByRole("form", { name: "New rule" });
    await form.getByLabel("Finished after (s without a span)").fill("2");
    await form.getByLabel("Daily cap (USD, optional)").fill("5");
    await form.getByRole("button", { name: "Create rule" }).click();
    const rule = page.getByTestId("online-rule");
    await expect(rule).toHaveCount(1);
    await expect(rule).toContainText("100%");
    await expect(rule).toContainText("2 s");
    await expect(rule.getByTestId("rule-evaluated")).toHaveText("0");

    // Spans arrive while the page is open.
    const first = [text("user", "My order #1001 has not arrived.")];
    const second = [text("user", "How do I reset my password?")];
    await exportSpans(request, name, [chatSpan("chat-a", first, "Sorry! It ships tomorrow."), chatSpan("chat-b", second, "Use the reset link on the sign-in page.")]);
    const rows = page.getByRole("table", { name: "Live conversations" }).getByTestId("live-conversation");
    await expect(rows).toHaveCount(2);
    await expect(rows.filter({ hasText: "chat-a" })).toContainText("2"); // two messages

    // Both finish and are judged by the rule.
    await expect(rule.getByTestId("rule-evaluated")).toHaveText("2", { timeout: 30_000 });
    await expect(rows.filter({ hasText: "evaluated" })).toHaveCount(2, { timeout: 20_000 });
    await expect(page.getByTestId("score-chart")).toBeVisible();
    await expect(page.getByTestId("score-chart").locator(".recharts-line")).toHaveCount(1);

    // chat-a grows by a turn: received, then judged again.
    await exportSpans(request, name, [
      chatSpan("chat-a", [...first, text("assistant", "Sorry! It ships tomorrow."), text("user", "Can you refund the shipping?")], "Done: the shipping is refunded."),
    ]);
    await expect(rows.filter({ hasText: "chat-a" })).toContainText("4");
    await expect(rule.getByTestId("rule-evaluated")).toHaveText("3", { timeout: 30_000 });
    await expect(rows.filter({ hasText: "evaluated" })).toHaveCount(2, { timeout: 20_000 });
    await expect(rule).toContainText("of $5.00");
    await shot(page, { path: "test-results/live-page.png", fullPage: true });

    // Edit the rule: half the conversations from now on.
    await rule.getByRole("button", { name: "Edit" }).click();
    await page.getByRole("form", { name: /Edit rule/ }).getByLabel("Sample (%)").fill("50");
    await page.getByRole("button", { name: "Save rule" }).click();
    await expect(rule).toContainText("50%");
  });
});

test.describe("Run buttons price a large run first", () => {
  test.beforeEach(async ({ request }) => {
    await request.post(`${judge}/reset`);
  });

  test("Run all on 101 cells shows cells, judge calls, cache hits and cost, starts nothing on Cancel, and runs on Start", async ({ page, request }) => {
    const name = `Priced ${Date.now()}`;
    const created = await request.post("/api/datasets", { data: { name } });
    const datasetId = ((await created.json()) as { id: number }).id;
    await exportSpans(
      request,
      name,
      Array.from({ length: 101 }, (_, i) => chatSpan(`priced-${i}`, [text("user", `Question number ${i}?`)], `Answer number ${i}.`)),
    );
    await addSystemMetrics(request, datasetId, ["Task Completion"]);
    await expect.poll(async () => Number((await request.get(`/api/datasets/${datasetId}/conversations?limit=1`)).headers()["x-total-count"])).toBe(101);

    await page.goto(`/datasets/${datasetId}`);
    await page.getByRole("button", { name: "Run all" }).click();
    const dialog = page.getByRole("dialog", { name: /Start this run/ });
    await expect(dialog).toBeVisible();
    await expect(dialog.locator('[data-figure="Cells"]')).toHaveText("101");
    await expect(dialog.locator('[data-figure="From the cache"]')).toHaveText("0");
    await expect(dialog.locator('[data-figure="Estimated cost"]')).toHaveText(/no price|\$/);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(dialog).toBeHidden();
    expect((await (await request.get(`/api/evaluation-pipeline-executions?dataset_id=${datasetId}`)).json()) as unknown[]).toHaveLength(0);

    await page.getByRole("button", { name: "Run all" }).click();
    await page.getByRole("dialog", { name: /Start this run/ }).getByRole("button", { name: "Start run" }).click();
    await expect(page.getByTestId("run-status").first()).toHaveAttribute("data-status", "completed", { timeout: 45_000 });
    const runs = (await (await request.get(`/api/evaluation-pipeline-executions?dataset_id=${datasetId}`)).json()) as Array<{ total_evaluations: number }>;
    expect(runs.map((r) => r.total_evaluations)).toEqual([101]);
  });
});
