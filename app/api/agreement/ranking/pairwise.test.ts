/**
 * A pairwise judge against people's ranks (issue 38.5): sibling replies of message trees (Open Assistant's
 * shape) compared in both orders, then GET /api/agreement/ranking?a=comparison:<id> — how often the
 * comparison orders siblings as people ranked them, beside a pointwise judge's figure on the same replies.
 * Worked by hand on a small file; then the real Open Assistant trees when ../shared/realdata is there.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { waitForComparison } from "@/lib/comparisons";
import { getMetricRow } from "@/lib/metrics/metrics";
import { call } from "@/lib/testing/http/call";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { upload } from "@/lib/testing/http/multipart";
import { addTestResult, createTestExecution } from "@/lib/testing/seed/results";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as conversationRoute from "@/app/api/conversations/[id]/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as comparisons from "@/app/api/comparisons/route";
import * as comparison from "@/app/api/comparisons/[id]/route";
import * as ranking from "./route";

// Hundreds of scripted rules make the double slow to answer on a loaded machine: no learnt time limit.
const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0", JUDGE_TIMEOUT_FLOOR_MS: "120000" });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

type Msg = { message_id: string; parent_id: string | null; text: string; role: "prompter" | "assistant"; rank?: number; replies: Msg[] };
const reply = (id: string, parent: string, rank: number): Msg => ({ message_id: id, parent_id: parent, text: `reply ${id}`, role: "assistant", rank, replies: [] });
const tree = (id: string, replies: Msg[]) => ({ message_tree_id: id, tree_state: "ready_for_export", prompt: { message_id: id, parent_id: null, text: `prompt ${id}`, role: "prompter", replies } });
const file = [tree("p1", [reply("a", "p1", 0), reply("b", "p1", 1), reply("c", "p1", 2)]), tree("p2", [reply("d", "p2", 0), reply("e", "p2", 1)])].map((t) => JSON.stringify(t)).join("\n");

async function importTrees(content: string, name: string): Promise<number> {
  const imported = await upload(createAndImport.POST, "/api/datasets/import", { file: content, filename: "trees.jsonl", fields: { name } });
  expect(imported.status, imported.text).toBe(201);
  return imported.json.dataset_id ?? imported.json.dataset.id;
}

async function metric(datasetId: number, body: Record<string, unknown>): Promise<number> {
  const created = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", { body: { dataset_id: datasetId, evaluation_level: "message", ...body } });
  expect(created.status, created.text).toBe(201);
  return created.json.id;
}

async function siblingsComparison(datasetId: number, node: number) {
  const started = await call(comparisons.POST, "POST", "/api/comparisons", { body: { pipeline_node_id: node, a: `dataset:${datasetId}`, pair_by: "siblings" } });
  expect(started.status, started.text).toBe(202);
  await waitForComparison(started.json.id);
  return (await call(comparison.GET, "GET", "/x", { params: { id: started.json.id } })).json;
}

/** Every stored assistant message with its meta. */
async function assistantMessages(datasetId: number) {
  const convs: { json: Array<{ id: number }> } = { json: [] };
  for (let offset = 0; ; offset += 500) {
    const page = await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations?limit=500&offset=${offset}`, { params: { id: datasetId } });
    convs.json.push(...(page.json as Array<{ id: number }>));
    if ((page.json as unknown[]).length < 500) break;
  }
  const out: Array<{ id: number; conversationId: number; meta: { message_id?: string; rank?: number } ; content: string }> = [];
  for (const c of convs.json as Array<{ id: number }>) {
    const full = await call(conversationRoute.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } });
    for (const m of full.json.messages as Array<{ id: number; role: string; content: string; meta: { message_id?: string; rank?: number } }>) {
      if (m.role === "assistant") out.push({ id: m.id, conversationId: c.id, meta: m.meta, content: m.content });
    }
  }
  return out;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The judge picks the reply that starts with `text`, in whichever place it is shown. */
function prefer(d: JudgeDouble, text: string) {
  const start = escape(text.slice(0, 60));
  d.addRule({ match: new RegExp(`name="@CANDIDATE_A">[\\s\\S]{0,40}?${start}`), behaviour: { kind: "verdict", body: { winner: "A", reasoning: "A" } } });
  d.addRule({ match: new RegExp(`name="@CANDIDATE_B">[\\s\\S]{0,40}?${start}`), behaviour: { kind: "verdict", body: { winner: "B", reasoning: "B" } } });
}

describe("GET /api/agreement/ranking?a=comparison:<id>", () => {
  it("orders sibling replies against people's ranks, by hand, beside the pointwise judge", async () => {
    const datasetId = await importTrees(file, "ranked trees");
    const pairwise = await metric(datasetId, { name: "Better reply", prompt: "Which reply answers better?\n@CANDIDATE_A\n@CANDIDATE_B", output_type: "pairwise" });
    // The judge picks a over anything, then c (people ranked it last of p1), then d.
    for (const r of ["reply a", "reply c", "reply d"]) prefer(double, r);
    const done = await siblingsComparison(datasetId, pairwise);
    // p1: (a,b) (a,c) (b,c); p2: (d,e) — 4 pairs, 8 calls, every verdict consistent.
    expect(done).toMatchObject({ status: "completed", pairs: 4, ties: 0, consistency: 1, judge_calls: 8 });

    const pointwise = await metric(datasetId, { name: "Helpfulness", prompt: "Rate @CURRENT_MESSAGE.output", output_type: "progress" });
    const node = await getMetricRow(pointwise);
    const execution = await createTestExecution(node);
    // The pointwise judge of ranking.test.ts: a .9, b .5, c .7 (ranks 0 1 2), d .4, e .4 → 2.5 of 4 = 0.625.
    const scores: Record<string, number> = { a: 0.9, b: 0.5, c: 0.7, d: 0.4, e: 0.4 };
    for (const m of await assistantMessages(datasetId)) {
      const s = scores[m.meta.message_id!];
      await addTestResult({ executionId: execution.id, node, entity: { type: "message", id: m.id, conversationId: m.conversationId, messageId: m.id }, result: { score: s }, score: s });
    }
    const res = await call(ranking.GET, "GET", `/api/agreement/ranking?dataset_id=${datasetId}&pipeline_node_id=${pairwise}&a=comparison:${done.id}&pointwise_node_id=${pointwise}`);
    expect(res.status, res.text).toBe(200);
    // (a,b) ✓ (a,c) ✓ (b,c) ✗ — the judge picked c, people ranked b above it — (d,e) ✓: 3 of 4. Wilson(3, 4) = [0.3006, 0.9544].
    expect(res.json).toMatchObject({ pairs: 4, groups: 2, items: 5, pairwise_accuracy: 0.75, ties: 0, pointwise: { pipeline_node_id: pointwise, pairs: 4, pairwise_accuracy: 0.625 } });
    expect(res.json.pairwise_interval[0]).toBeCloseTo(0.3006, 4);
    expect(res.json.pairwise_interval[1]).toBeCloseTo(0.9544, 4);
    expect(res.json.discordant).toHaveLength(1);

    // Refusals: the comparison's metric only, and pointwise_node_id only with a comparison.
    const other = await call(ranking.GET, "GET", `/api/agreement/ranking?dataset_id=${datasetId}&pipeline_node_id=${pointwise}&a=comparison:${done.id}`);
    expect([other.status, other.json.error.message]).toEqual([422, expect.stringMatching(/judged by metric/)]);
    const stray = await call(ranking.GET, "GET", `/api/agreement/ranking?dataset_id=${datasetId}&pipeline_node_id=${pointwise}&pointwise_node_id=${pointwise}`);
    expect(stray.status).toBe(422);
    expect((await call(ranking.GET, "GET", `/api/agreement/ranking?dataset_id=${datasetId}&pipeline_node_id=${pairwise}&a=comparison:999999`)).status).toBe(404);
  });

  const realFile = path.resolve(process.cwd(), "../shared/realdata/oasst_en_100_tree.jsonl");
  it.runIf(fs.existsSync(realFile))("on the real Open Assistant trees: a judge that finds people's best reply, beside a pointwise judge", async () => {
    const datasetId = await importTrees(fs.readFileSync(realFile, "utf8"), "oasst");
    const pairwise = await metric(datasetId, { name: "Better reply", prompt: "Which reply is better?", output_type: "pairwise" });
    const messages = await assistantMessages(datasetId);
    // The pairwise judge recognises each prompt's best reply (rank 0) wherever it is shown; between two
    // others it picks the first shown, in both orders — a tie.
    const best = new Set<string>();
    for (const m of messages) {
      if (m.meta.rank !== 0 || !m.content || best.has(m.content)) continue;
      best.add(m.content);
      prefer(double, m.content);
    }
    const done = await siblingsComparison(datasetId, pairwise);
    expect(done.status).toBe("completed");
    expect(done.pairs).toBeGreaterThan(50);
    const rankOf = new Map(messages.map((m) => [m.id, m.meta.rank]));
    // Counted from the pairs' outcomes: of the pairs people ranked differently, 1 when the reply picked in
    // both orders is people's better one, ½ for a tie. With the judge above that is about (pairs with the
    // best reply + ½ the rest) / pairs — not exactly, since a few replies start like another prompt's best.
    let pairs = 0;
    let concordant = 0;
    let ideal = 0;
    expect(done.failed).toBe(0);
    for (const r of done.results as Array<{ a: { message_id: number }; b: { message_id: number }; outcome: "a" | "b" | "tie" }>) {
      const [ra, rb] = [rankOf.get(r.a.message_id), rankOf.get(r.b.message_id)];
      if (typeof ra !== "number" || typeof rb !== "number" || ra === rb) continue;
      pairs++;
      concordant += r.outcome === "tie" ? 0.5 : (r.outcome === "a") === ra < rb ? 1 : 0;
      ideal += ra === 0 || rb === 0 ? 1 : 0.5;
    }
    expect(Math.abs(concordant - ideal) / pairs).toBeLessThan(0.02);
    // The pointwise judge: score = 1 / (1 + rank), as people ranked (accuracy 1).
    const pointwise = await metric(datasetId, { name: "Helpfulness", prompt: "Rate @CURRENT_MESSAGE.output", output_type: "progress" });
    const node = await getMetricRow(pointwise);
    const execution = await createTestExecution(node);
    for (const m of messages) {
      if (typeof m.meta.rank !== "number") continue;
      const score = 1 / (1 + m.meta.rank);
      await addTestResult({ executionId: execution.id, node, entity: { type: "message", id: m.id, conversationId: m.conversationId, messageId: m.id }, result: { score }, score });
    }
    const res = await call(ranking.GET, "GET", `/api/agreement/ranking?dataset_id=${datasetId}&pipeline_node_id=${pairwise}&a=comparison:${done.id}&pointwise_node_id=${pointwise}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.pairs).toBe(pairs);
    expect(res.json.pairwise_accuracy).toBeCloseTo(concordant / pairs, 12);
    expect(res.json.pairwise_accuracy).toBeGreaterThan(0.5);
    expect(res.json.pairwise_interval[0]).toBeLessThan(res.json.pairwise_accuracy);
    expect(res.json.pointwise.pairwise_accuracy).toBe(1);
  }, 300_000);
  if (!fs.existsSync(realFile)) it.skip("real Open Assistant trees: ../shared/realdata is absent, skipped", () => undefined);
});
