/**
 * Every real public file in ../shared/realdata (sources and licences in its README.txt; never copied into
 * this repository) imported through the import page in Chromium, as a person would: choose the file (the
 * two MT-Bench files together, joined on `question_id`), name the dataset, Import. For each: the detected
 * format the page shows, the counts it shows against what the API stored (the dataset's counts and its
 * conversations read back), the text kept (≥ 99%, counted against the file with the route test's helper),
 * tool calls and results as steps, and the file's ground truth in meta. One page, no reloads between
 * files; a screenshot per file under test-results/screenshots/realdata/. Skips, saying so, where the
 * folder is absent.
 */
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import {
  jsonl,
  readRealdata,
  realdataAbsentMessage,
  realdataPresent,
  sessionMessageParts,
  textKept,
  type KeptConversation,
  type KeptStep,
} from "../lib/testing/realdata/files";
import { shot } from "./workspace-helpers";

type Case = {
  /** The screenshot's name and the dataset's. */
  title: string;
  files: string[];
  joinKey?: string;
  format: string;
  /** The file's conversation parts, for the text kept. */
  textParts: (texts: string[]) => unknown;
  toolCalls: number;
  toolResults: number;
  /** The file's ground truth as stored: a count of conversations or messages carrying it, at least 1. */
  groundTruth?: { what: string; count: (cs: KeptConversation[]) => number; expected: number };
  /** A value the file writes in another form than the stored one, as the page lists it. */
  reserialised?: string;
};

const messagesOf = (cs: KeptConversation[]) => cs.flatMap((c) => c.messages);

const cases: Case[] = [
  {
    title: "tau-bench airline",
    files: ["tau-bench_gpt-4o-airline.json"],
    format: "OpenAI chat messages",
    textParts: ([t]) => JSON.parse(t),
    toolCalls: 1164,
    toolResults: 1164,
    groundTruth: { what: "reward in conversation meta", count: (cs) => cs.filter((c) => typeof c.meta?.reward === "number").length, expected: 200 },
    reserialised: "[].reward: re-serialised: 200 values here, e.g. 0.0 stored as 0",
  },
  {
    title: "LLaMA-Factory glaive tool calls",
    files: ["llamafactory_glaive_toolcall_en_demo.json"],
    format: "ShareGPT / LLaMA-Factory",
    textParts: ([t]) => JSON.parse(t),
    toolCalls: 211,
    toolResults: 211,
  },
  {
    title: "LLaMA-Factory reason tool use",
    files: ["llamafactory_reason_tool_use_demo_50.jsonl"],
    format: "Messages with content parts",
    textParts: ([t]) => jsonl(t),
    toolCalls: 68,
    toolResults: 42,
  },
  {
    title: "MT-Bench questions and GPT-4o answers",
    files: ["fastchat_mt_bench_question.jsonl", "fastchat_mt_bench_model_answer_gpt-4o.jsonl"],
    joinKey: "question_id",
    format: "Files joined on a key",
    textParts: (ts) => ts.flatMap(jsonl),
    toolCalls: 0,
    toolResults: 0,
    groundTruth: { what: "reference answers in conversation meta", count: (cs) => cs.filter((c) => Array.isArray(c.meta?.reference)).length, expected: 39 },
  },
  {
    title: "Claude Code session",
    files: ["claudecode_spotter_session_258c7280.jsonl"],
    format: "Coding-agent session log",
    textParts: ([t]) => sessionMessageParts(t),
    // 186 of the session, 2 of its sub-agent (inside progress records).
    toolCalls: 188,
    toolResults: 188,
  },
  {
    title: "OASST message trees",
    files: ["oasst_en_100_tree.jsonl"],
    format: "Message trees",
    textParts: ([t]) => jsonl(t),
    toolCalls: 0,
    toolResults: 0,
    groundTruth: {
      what: "human rank in message meta (each tree message counted once)",
      count: (cs) => messagesOf(cs).filter((m) => !m.meta?.shared_prefix && typeof m.meta?.rank === "number").length,
      expected: 641,
    },
  },
  {
    title: "SWE-agent trajectory",
    files: ["sweagent_marshmallow-1867_function_calling.traj"],
    format: "SWE-agent trajectory",
    textParts: ([t]) => JSON.parse(t),
    toolCalls: 11,
    toolResults: 11,
    groundTruth: {
      what: "the run's exit status in conversation meta",
      count: (cs) => cs.filter((c) => (c.meta?.info as { exit_status?: unknown } | undefined)?.exit_status === "submitted").length,
      expected: 1,
    },
  },
];

async function getJson<T>(request: APIRequestContext, url: string): Promise<{ body: T; total: number }> {
  const res = await request.get(url);
  expect(res.status(), url).toBe(200);
  return { body: (await res.json()) as T, total: Number(res.headers()["x-total-count"] ?? NaN) };
}

/** Every conversation of the dataset, as the API gives it back (list pages, then each one whole). */
async function storedConversations(request: APIRequestContext, datasetId: number): Promise<KeptConversation[]> {
  const ids: number[] = [];
  let total = Infinity;
  for (let offset = 0; offset < total; offset += 500) {
    const page = await getJson<Array<{ id: number }>>(request, `/api/datasets/${datasetId}/conversations?limit=500&offset=${offset}`);
    total = page.total;
    ids.push(...page.body.map((c) => c.id));
  }
  const out: KeptConversation[] = [];
  for (let i = 0; i < ids.length; i += 25) {
    const batch = await Promise.all(ids.slice(i, i + 25).map((id) => getJson<KeptConversation>(request, `/api/conversations/${id}`)));
    out.push(...batch.map((b) => b.body));
  }
  return out;
}

/** The three counts the page shows on success. */
async function shownCounts(page: Page) {
  const status = (await page.getByTestId("import-success").getByRole("status").innerText()).replace(/\s+/g, " ");
  const count = (what: string) => Number((status.match(new RegExp(`([\\d,]+) ${what}`))?.[1] ?? "NaN").replace(/,/g, ""));
  return { conversations: count("conversations?"), messages: count("messages?"), steps: count("steps?") };
}

// @store-independent: the import page's steps over the real files; what each import stores is the route test (realdata.test.ts) on both stores.
test.describe("every real file imports through the import page", { tag: "@store-independent" }, () => {
  test.skip(!realdataPresent, `realdata-import.spec.ts: ${realdataAbsentMessage}`);

  test("each file in ../shared/realdata: detected format, counts as stored, text kept, tool steps, ground truth", async ({ page, request }) => {
    test.setTimeout(300_000);
    await page.goto("/import");
    await expect(page.getByRole("heading", { name: "Import conversations", level: 1 })).toBeVisible();
    const stamp = Date.now();

    for (const c of cases) {
      await test.step(c.title, async () => {
        const texts = c.files.map(readRealdata);
        await page.getByLabel("choose a file").setInputFiles(c.files.map((name, i) => ({ name, mimeType: "application/json", buffer: Buffer.from(texts[i]) })));
        // Choosing files clears the last outcome: what follows is this file's.
        await expect(page.getByTestId("import-success")).toHaveCount(0);
        await expect(page.getByTestId("chosen-file")).toHaveCount(c.files.length);
        if (c.joinKey) await page.getByLabel("Join on").fill(c.joinKey);
        else await expect(page.getByLabel("Join on")).toHaveCount(0);
        await page.getByLabel("Dataset name").fill(`${c.title} ${stamp}`);
        await page.getByRole("button", { name: "Import", exact: true }).click();

        const success = page.getByTestId("import-success");
        await expect(success.or(page.getByTestId("import-failure"))).toBeVisible({ timeout: 60_000 });
        await expect(page.getByTestId("import-failure"), "the file was refused").toHaveCount(0);
        await expect(success).toContainText(`Detected format: ${c.format}`);
        // The session and its sub-agent (whose messages are inside progress records).
        if (c.title === "Claude Code session") await expect(success.getByRole("status").getByText("2 conversations", { exact: true })).toBeVisible();
        await expect(page.getByTestId("import-records")).toBeVisible();
        if (c.reserialised) await expect(page.getByTestId("reserialised")).toContainText(c.reserialised);
        await shot(page, { path: `test-results/screenshots/realdata/${c.title.replace(/\W+/g, "-").toLowerCase()}.png`, fullPage: true });

        const href = await success.getByRole("link", { name: "Open dataset →" }).getAttribute("href");
        const datasetId = Number(href?.match(/\/datasets\/(\d+)$/)?.[1]);
        const shown = await shownCounts(page);
        const dataset = (await getJson<{ conversation_count: number; message_count: number; step_count: number }>(request, `/api/datasets/${datasetId}`)).body;
        expect(shown).toEqual({ conversations: dataset.conversation_count, messages: dataset.message_count, steps: dataset.step_count });

        const stored = await storedConversations(request, datasetId);
        const steps: KeptStep[] = messagesOf(stored).flatMap((m) => m.steps);
        expect(stored).toHaveLength(shown.conversations);
        expect(messagesOf(stored)).toHaveLength(shown.messages);
        expect(steps).toHaveLength(shown.steps);

        const kept = textKept(c.textParts(texts), stored);
        expect(kept.total).toBeGreaterThan(0);
        expect(kept.ratio, "share of the file's text kept").toBeGreaterThanOrEqual(0.99);
        expect(steps.filter((s) => s.tool_call)).toHaveLength(c.toolCalls);
        expect(steps.filter((s) => s.tool_result !== null)).toHaveLength(c.toolResults);
        if (c.groundTruth) expect(c.groundTruth.count(stored), c.groundTruth.what).toBe(c.groundTruth.expected);
      });
    }
  });
});
