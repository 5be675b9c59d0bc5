/**
 * Issue 39 through the routes, against the judge double (which answers a prompt carrying examples like its
 * nearest example): examples that encode the labels raise held-out κ and are recommended and promotable;
 * labels that are noise are not, and promote says why (409) unless forced; no cell is judged with an
 * example of its own fold; rewrite's optimiser calls are counted; bad input is a clear 4xx.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as versions from "@/app/api/evaluation-pipeline-nodes/[id]/versions/route";
import * as labels from "@/app/api/labels/route";
import * as conversation from "@/app/api/conversations/[id]/route";
import * as history from "@/app/api/evaluation-pipeline-nodes/[id]/agreement-history/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import { waitForExecution } from "@/lib/runner/run";
import { seededRandom } from "@/lib/agreement/regression";
import { failExpiredAlignments, renewAlignmentLease } from "@/db/repositories/alignments";
import { alignmentConcurrency, recoverAlignments, sweepExpiredAlignments, waitForAlignment } from "@/lib/align";
import { getJudgeConfig } from "@/lib/judge/config";
import { EXAMPLES_BEGIN, EXAMPLES_END } from "@/lib/align/few-shot";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { stopLease } from "@/lib/jobs";
import { upload } from "@/lib/testing/http/multipart";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { clearJudgeCache } from "@/db/repositories/judge";
import * as collection from "./route";
import * as item from "./[id]/route";
import * as promote from "./[id]/promote/route";
import * as cancel from "./[id]/cancel/route";

let double: JudgeDouble;
const N = 40;
const resolvedWords = "refund approved processed confirmation ticket closed thanks";
const unresolvedWords = "unable locate account escalation pending frustrated waiting";

/** 40 conversations: even ones resolved (their words say so), odd ones not; each names its case. */
async function dataset(name: string): Promise<{ datasetId: number; conversationIds: number[]; metricId: number }> {
  const file = JSON.stringify({
    conversations: Array.from({ length: N }, (_, i) => ({
      name: `case${i}`,
      meta: { reward: i % 2 === 0 ? 1 : 0 },
      messages: [
        { role: "user", content: `case${i} order question number${i}` },
        { role: "assistant", content: i % 2 === 0 ? resolvedWords : unresolvedWords },
      ],
    })),
  });
  const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name } });
  expect(imported.status).toBe(201);
  const datasetId = imported.json.dataset_id ?? imported.json.dataset.id;
  const convs = await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } });
  const created = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
    body: {
      dataset_id: datasetId,
      name: "Resolved",
      evaluation_level: "conversation",
      prompt: "Was the customer's request resolved? @HISTORY",
      output_type: "checkbox",
      reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } },
    },
  });
  expect(created.status).toBe(201);
  return { datasetId, conversationIds: convs.json.map((c: { id: number }) => c.id), metricId: created.json.id };
}

async function label(d: { datasetId: number; metricId: number }, conversationId: number, value: boolean, user: string, note?: string) {
  const res = await call(labels.POST, "POST", "/api/labels", {
    body: { dataset_id: d.datasetId, pipeline_node_id: d.metricId, entity_type: "conversation", entity_id: conversationId, value, note },
    headers: { "x-user-id": user },
  });
  expect(res.status).toBe(201);
}

const start = (body: unknown) => call(collection.POST, "POST", "/api/alignments", { body });
const get = (id: number) => call(item.GET, "GET", `/api/alignments/${id}`, { params: { id } });
const cancelIt = (id: number) => call(cancel.POST, "POST", `/api/alignments/${id}/cancel`, { params: { id } });
const promoteIt = (id: number, body: unknown) => call(promote.POST, "POST", `/api/alignments/${id}/promote`, { params: { id }, body });

async function finished(body: unknown) {
  const res = await start(body);
  expect(res.status, res.text).toBe(202);
  await waitForAlignment(res.json.id);
  const got = await get(res.json.id);
  expect(got.status).toBe(200);
  expect(got.json.status, got.json.error).toBe("completed");
  return got.json;
}

beforeAll(async () => {
  double = await startJudgeDouble();
});

afterAll(async () => {
  delete process.env.OPENAI_BASE_URL;
  delete process.env.JUDGE_PRICES;
  resetConfig();
  await double?.close();
});

beforeEach(() => {
  double.reset();
  process.env.OPENAI_BASE_URL = double.baseURL;
  delete process.env.JUDGE_PRICES;
  resetConfig();
});

describe("few_shot, examples that encode the labels", () => {
  let d: Awaited<ReturnType<typeof dataset>>;
  beforeAll(async () => {
    d = await dataset("aligned labels");
    // People's labels follow the content; two annotators agree on the first ten cells.
    for (const [i, id] of d.conversationIds.entries()) await label(d, id, i % 2 === 0, "ann");
    for (const [i, id] of d.conversationIds.slice(0, 10).entries()) await label(d, id, i % 2 === 0, "bob");
  });

  it("raises held-out κ, is recommended, never shows a cell an example of its own fold, and promotes as a new prompt version", async () => {
    const a = await finished({ pipeline_node_id: d.metricId, truth: "labels", strategies: ["few_shot"], folds: 5, seed: 3 });
    expect(a.truth_n).toBe(N);
    expect(a.annotator_kappa).toBe(1);
    expect(a.warnings).toEqual([]);
    // The double's default verdict passes everything: κ 0, TPR 1, TNR 0.
    expect(a.baseline).toMatchObject({ kappa: 0, tpr: 1, tnr: 0 });
    const fewShot = a.candidates[0];
    expect(fewShot.strategy).toBe("few_shot");
    expect(fewShot.held_out.kappa).toBe(1);
    expect(fewShot.delta_kappa.estimate).toBe(1);
    expect(fewShot.delta_kappa.interval[0]).toBeGreaterThan(0);
    expect(a.recommended).toBe("few_shot");
    expect(fewShot.prompt).toContain(EXAMPLES_BEGIN);
    expect(fewShot.prompt).toContain("Cells people labelled, with the verdict they gave");
    expect(fewShot.examples.length).toBe(8);
    expect(a.usage.judge_calls).toBe(2 * N);

    // Leakage, in the prompts the judge received: the judged case never appears among its examples, nor
    // does any case of its own held-out fold.
    const foldOf = new Map<number, number>();
    for (const f of a.folds_detail) for (const id of f.held_out) foldOf.set(id, f.fold);
    const caseToId = new Map(d.conversationIds.map((id, i) => [`case${i}`, id]));
    const withExamples = double.requests.map((r) => JSON.stringify(r.body)).filter((t) => t.includes(EXAMPLES_BEGIN));
    expect(withExamples).toHaveLength(N);
    for (const text of withExamples) {
      const start = text.indexOf(EXAMPLES_BEGIN);
      const end = text.indexOf(EXAMPLES_END);
      const section = text.slice(start, end);
      const judged = [...(text.slice(0, start) + text.slice(end)).matchAll(/case\d+/g)].map((m) => m[0]);
      const shown = [...section.matchAll(/case\d+/g)].map((m) => m[0]);
      expect(new Set(judged).size).toBe(1);
      expect(shown.length).toBe(8);
      const fold = foldOf.get(caseToId.get(judged[0])!);
      for (const s of shown) {
        expect(s).not.toBe(judged[0]);
        expect(foldOf.get(caseToId.get(s)!)).not.toBe(fold);
      }
    }

    const before = await call(versions.GET, "GET", `/api/evaluation-pipeline-nodes/${d.metricId}/versions`, { params: { id: d.metricId } });
    const promoted = await promoteIt(a.id, { strategy: "few_shot" });
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.json.version.prompt).toBe(fewShot.prompt);
    expect(promoted.json.previous_version).toBe(before.json.at(-1).version);
    const after = await call(versions.GET, "GET", `/api/evaluation-pipeline-nodes/${d.metricId}/versions`, { params: { id: d.metricId } });
    // The old prompt stays, one version back.
    expect(after.json.at(-2).prompt).toBe("Was the customer's request resolved? @HISTORY");
    expect(after.json.at(-1).version).toBe(after.json.at(-2).version + 1);
  });

  it("with the reference as the truth, the examples say their verdicts are the reference's, not people's labels", async () => {
    const r = await dataset("few-shot reference");
    const a = await finished({ pipeline_node_id: r.metricId, truth: "reference", strategies: ["few_shot"], folds: 4 });
    const prompt = a.candidates[0].prompt as string;
    expect(prompt).toContain(EXAMPLES_BEGIN);
    expect(prompt).toContain("Cells with the verdict their reference gives");
    expect(prompt).not.toMatch(/labelled by people|people labelled/);
  });

  it("rewrite: the optimiser's calls are counted, a model is configurable, and a rubric that does not help is not recommended", async () => {
    // Its own dataset: the reference (meta.reward) is the truth, and the metric's prompt is the original one.
    const r = await dataset("rewrite");
    double.addRule({ match: "You improve the rubric", behaviour: { kind: "verdict", body: { rubric: "Resolved means the refund went through. @HISTORY" } } });
    const a = await finished({ pipeline_node_id: r.metricId, truth: "reference", strategies: ["rewrite"], folds: 4, optimizer_model: "optimiser-x" });
    expect(a.optimizer_model).toBe("optimiser-x");
    expect(a.usage.optimizer_calls).toBe(5);
    expect(a.candidates[0].prompt).toBe("Resolved means the refund went through. @HISTORY");
    const models = double.requests.filter((r) => JSON.stringify(r.body).includes("You improve the rubric")).map((r) => (r.body as { model: string }).model);
    expect(models).toEqual(Array(5).fill("optimiser-x"));
    expect(a.recommended).toBeNull();
    expect(a.progress).toEqual({ total: a.usage.judge_calls + a.usage.optimizer_calls + a.usage.cached, done: a.usage.judge_calls + a.usage.optimizer_calls + a.usage.cached });
  });

  it("dry_run answers with the calls and cost it would make and judges nothing", async () => {
    process.env.JUDGE_PRICES = JSON.stringify({ "gpt-4o-mini": { input: 1, output: 2 } });
    resetConfig();
    const res = await start({ pipeline_node_id: d.metricId, truth: "labels", strategies: ["few_shot", "rewrite"], folds: 5, dry_run: true });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ dry_run: true, truth_n: N, judge_calls: 3 * N, optimizer_calls: 6 });
    expect(res.json.estimated_cost_usd).toBeGreaterThan(0);
    expect(double.count()).toBe(0);
  });

  it("stops at max_cost_usd, saying so", async () => {
    process.env.JUDGE_PRICES = JSON.stringify({ "gpt-4o-mini": { input: 1000, output: 1000 } });
    resetConfig();
    const res = await start({ pipeline_node_id: d.metricId, truth: "labels", strategies: ["few_shot"], seed: 99, max_cost_usd: 0.5 });
    expect(res.status).toBe(202);
    await waitForAlignment(res.json.id);
    const a = (await get(res.json.id)).json;
    expect(a.status).toBe("failed");
    expect(a.error).toMatch(/budget reached/);
    expect(a.usage.judge_calls).toBeLessThan(2 * N);
  });
});

describe("agreement history", () => {
  it("shows κ per prompt version: the runs of the old prompt and of the promoted one, each against the labels", async () => {
    const d = await dataset("history");
    for (const [i, id] of d.conversationIds.entries()) await label(d, id, i % 2 === 0, "ann");
    const runColumn = async () => {
      const started = await call(run.POST, "POST", "/x", { body: { dataset_id: d.datasetId, pipeline_node_id: d.metricId, no_cache: true } });
      expect(started.status, started.text).toBe(202);
      await waitForExecution(started.json.id);
    };
    await runColumn();
    const a = await finished({ pipeline_node_id: d.metricId, truth: "labels", strategies: ["few_shot"], seed: 5 });
    expect((await promoteIt(a.id, { strategy: "few_shot" })).status).toBe(200);
    await runColumn();
    const h = await call(history.GET, "GET", `/api/evaluation-pipeline-nodes/${d.metricId}/agreement-history`, { params: { id: d.metricId } });
    expect(h.status, h.text).toBe(200);
    expect(h.json.truth).toBe("labels");
    expect(h.json.versions.map((v: { version: number; n: number; kappa: number }) => [v.version, v.n, v.kappa])).toEqual([
      [1, N, 0],
      [2, N, 1],
    ]);
    expect(h.json.versions[1].kappa_interval).toEqual([1, 1]);
    // The promoted version also carries its held-out κ from the alignment it came from.
    expect(h.json.versions[1].aligned).toMatchObject({ alignment_id: a.id, strategy: "few_shot", kappa: 1, baseline_kappa: 0 });
    expect(h.json.versions[0].aligned).toBeNull();
    expect((await get(a.id)).json.promoted).toEqual([expect.objectContaining({ strategy: "few_shot", version: 2 })]);
    expect((await call(history.GET, "GET", "/x", { params: { id: 987654 } })).status).toBe(404);
  });
});

describe("noise", () => {
  it("labels unrelated to the content are not recommended; promote answers 409 saying why, and force promotes", async () => {
    const d = await dataset("noisy labels");
    const random = seededRandom(17);
    const noisy = d.conversationIds.map(() => random() < 0.5);
    for (const [i, id] of d.conversationIds.entries()) await label(d, id, noisy[i], "ann");
    // A second annotator who agrees with the first no better than chance.
    for (const [i, id] of d.conversationIds.slice(0, 20).entries()) await label(d, id, i % 3 === 0, "bob");
    const a = await finished({ pipeline_node_id: d.metricId, truth: "labels", strategies: ["few_shot"], folds: 5, seed: 3 });
    expect(a.annotator_kappa).toBeLessThan(0.6);
    expect(a.warnings[0]).toMatch(/cannot be aligned to people who disagree/);
    const fewShot = a.candidates[0];
    expect(fewShot.beats_baseline).toBe(false);
    expect(fewShot.delta_kappa.interval[0]).toBeLessThanOrEqual(0);
    expect(a.recommended).toBeNull();
    const refused = await promoteIt(a.id, { strategy: "few_shot" });
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toMatch(/did not beat the baseline on held-out cells: Δκ .* does not lie above zero.*force: true/);
    const forced = await promoteIt(a.id, { strategy: "few_shot", force: true });
    expect(forced.status).toBe(200);
    expect(forced.json.version.prompt).toBe(fewShot.prompt);
  });
});

describe("a message-level metric", () => {
  it("aligns on labelled assistant messages: examples quote the transcript up to the message, figures per message", async () => {
    const d = await dataset("messages");
    const metric = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
      body: { dataset_id: d.datasetId, name: "Reply resolves", evaluation_level: "message", prompt: "Does this reply resolve the request? @CURRENT_MESSAGE.output", output_type: "checkbox" },
    });
    expect(metric.status).toBe(201);
    for (const [i, id] of d.conversationIds.entries()) {
      const conv = await call(conversation.GET, "GET", `/api/conversations/${id}`, { params: { id } });
      const reply = conv.json.messages.find((m: { role: string }) => m.role === "assistant");
      const res = await call(labels.POST, "POST", "/api/labels", {
        body: { dataset_id: d.datasetId, pipeline_node_id: metric.json.id, entity_type: "message", entity_id: reply.id, value: i % 2 === 0 },
      });
      expect(res.status, res.text).toBe(201);
    }
    const a = await finished({ pipeline_node_id: metric.json.id, truth: "labels", strategies: ["few_shot"], seed: 2 });
    expect(a.truth_n).toBe(N);
    expect(a.candidates[0].examples.every((e: { entity_type: string }) => e.entity_type === "message")).toBe(true);
    expect(a.candidates[0].held_out.kappa).toBe(1);
    expect(a.recommended).toBe("few_shot");
  });
});

describe("threshold, on a score metric", () => {
  it("finds the pass threshold on training folds, proves it on held-out ones; promote says a threshold is not a prompt", async () => {
    // The judge scores resolved conversations 0.7 and the others 0.6: both pass at 0.5, so the baseline's κ is 0.
    const verdict = (score: number) => `[[judge-double:verdict {"score":${score},"reasoning":"r"}]]`;
    const file = JSON.stringify({
      conversations: Array.from({ length: 30 }, (_, i) => ({
        name: `t${i}`,
        meta: { reward: i % 2 === 0 ? 1 : 0 },
        messages: [
          { role: "user", content: `question ${i}` },
          { role: "assistant", content: `answer ${i} ${verdict(i % 2 === 0 ? 0.7 : 0.6)}` },
        ],
      })),
    });
    const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "scores" } });
    const datasetId = imported.json.dataset_id;
    const metric = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
      body: {
        dataset_id: datasetId,
        name: "Quality",
        evaluation_level: "conversation",
        prompt: "How good? @HISTORY",
        output_type: "progress",
        reference: { source: "meta", level: "conversation", path: "meta.reward", rule: { op: ">=", value: 1 } },
      },
    });
    const a = await finished({ pipeline_node_id: metric.json.id, truth: "reference", strategies: ["threshold"], folds: 3 });
    expect(a.pass_threshold).toBe(0.5);
    expect(a.baseline).toMatchObject({ kappa: 0, tpr: 1, tnr: 0 });
    const t = a.candidates[0];
    expect(t.fold_thresholds).toEqual([0.7, 0.7, 0.7]);
    expect(t.threshold).toBe(0.7);
    expect(t.held_out).toMatchObject({ kappa: 1, accuracy: 1, tpr: 1, tnr: 1 });
    expect(a.recommended).toBe("threshold");
    // No extra judge calls: the threshold reads the baseline's scores.
    expect(a.usage.judge_calls).toBe(30);
    const promoted = await promoteIt(a.id, { strategy: "threshold" });
    expect(promoted.status).toBe(422);
    expect(promoted.json.error.message).toMatch(/not part of the metric's prompt: use 0.7/);
    expect((await promoteIt(a.id, { strategy: "few_shot" })).status).toBe(422);
  });
});

describe("a server stopped mid-alignment", () => {
  // Each test's alignment must still be calling the (slowed) judge when it is stopped: the datasets hold the
  // same texts, so verdicts cached by an earlier alignment would finish it at once (a PostgreSQL run saw the
  // sweep find it already completed).
  beforeEach(() => clearJudgeCache());

  it("leaves no alignment processing for good: at start-up (SQLite) it ends failed, saying to start it again", async () => {
    const d = await dataset("interrupted");
    double.setLatency(5_000);
    const res = await start({ pipeline_node_id: d.metricId, truth: "reference", strategies: ["few_shot"] });
    expect(res.status).toBe(202);
    await expect.poll(async () => (await get(res.json.id)).json.status).toBe("processing");
    // What a restart does; on PostgreSQL another process may be working it, so it is left alone there.
    const ended = await recoverAlignments();
    const a = (await get(res.json.id)).json;
    if (process.env.TEST_STORE === "postgres") {
      expect(ended).toBe(0);
      expect(a.status).toBe("processing");
    } else {
      expect(ended).toBe(1);
      expect(a).toMatchObject({ status: "failed", error: expect.stringMatching(/interrupted.*start it again/) });
    }
    double.setLatency(0);
    await waitForAlignment(res.json.id);
    // The work that was still going on does not bring an ended alignment back.
    if (process.env.TEST_STORE !== "postgres") expect((await get(res.json.id)).json.status).toBe("failed");
  });

  it("an alignment whose process died (its lease ran out) ends failed at any process's sweep, on either store; one being worked is left alone", async () => {
    const d = await dataset("lease ran out");
    double.setLatency(5_000);
    const res = await start({ pipeline_node_id: d.metricId, truth: "reference", strategies: ["few_shot"] });
    expect(res.status).toBe(202);
    await expect.poll(async () => (await get(res.json.id)).json.status).toBe("processing");
    // Every slot's call has reached the double (each hangs there 5 s), so none is on its way when the sweep
    // ends the alignment: under load, calls sent just before it arrived after the count below was read.
    // This test's calls (open() counts since the reset; inFlight() would also count the test before's calls,
    // aborted or still in their 5 s, whose close the double has not yet heard).
    await expect.poll(() => double.open(), { timeout: 60_000 }).toBe(alignmentConcurrency(getJudgeConfig().maxConcurrency));
    expect(await sweepExpiredAlignments(new Date().toISOString())).toBe(0);
    // The process working it stopped renewing its lease a while ago (as a killed process does).
    // A renewal already under way lands before the lease is moved to the past (it would move it back).
    await stopLease(`alignment ${res.json.id}`);
    await renewAlignmentLease(res.json.id, new Date(Date.now() - 1000).toISOString());
    expect(await sweepExpiredAlignments(new Date().toISOString())).toBe(1);
    expect((await get(res.json.id)).json).toMatchObject({ status: "failed", error: "interrupted: the process working it stopped; start it again" });
    // This process was still working it (stalled, not dead): its calls out are aborted and no other starts,
    // though every call still takes 5 s (before, it went on calling to the end, its writes refused).
    const calls = double.count();
    await waitForAlignment(res.json.id);
    expect(double.count()).toBe(calls);
    expect((await get(res.json.id)).json).toMatchObject({ status: "failed", error: "interrupted: the process working it stopped; start it again" });
    double.setLatency(0);
  });
});

describe("cancelling an alignment", () => {
  beforeEach(() => clearJudgeCache());

  it("POST /alignments/{id}/cancel ends it cancelled at once: its calls are aborted, none starts after, a second cancel is 409", async () => {
    const d = await dataset("cancelled");
    double.setLatency(5_000);
    const res = await start({ pipeline_node_id: d.metricId, truth: "reference", strategies: ["few_shot"] });
    expect(res.status).toBe(202);
    await expect.poll(() => double.open(), { timeout: 60_000 }).toBeGreaterThan(0);
    const cancelled = await cancelIt(res.json.id);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json).toMatchObject({ status: "cancelled", error: "cancelled" });
    // The answer comes once this process stopped its work: no call starts after it, though each takes 5 s.
    const calls = double.count();
    await waitForAlignment(res.json.id);
    expect(double.count()).toBe(calls);
    expect((await get(res.json.id)).json).toMatchObject({ status: "cancelled", error: "cancelled", candidates: [] });
    expect((await cancelIt(res.json.id)).status).toBe(409);
    expect((await promoteIt(res.json.id, { strategy: "few_shot" })).status).toBe(409);
    expect((await cancelIt(999_999)).status).toBe(404);
    double.setLatency(0);
  });

  it("swept by another process while this one was stalled: this one stops calling the judge at its next lease renewal", async () => {
    // Renewed every second (a third of the lease, 1 s at least).
    process.env.JOB_VISIBILITY_TIMEOUT_SECONDS = "3";
    resetConfig();
    try {
      const d = await dataset("swept elsewhere");
      double.setLatency(5_000);
      const res = await start({ pipeline_node_id: d.metricId, truth: "reference", strategies: ["few_shot"] });
      expect(res.status).toBe(202);
      await expect.poll(() => double.open(), { timeout: 60_000 }).toBe(alignmentConcurrency(getJudgeConfig().maxConcurrency));
      // What another process's sweep writes when this one's lease looked run out (its loop stalled past it).
      await renewAlignmentLease(res.json.id, new Date(Date.now() - 1000).toISOString());
      expect(await failExpiredAlignments(new Date().toISOString(), "interrupted: the process working it stopped; start it again")).toEqual([res.json.id]);
      // Before, this process went on calling the judge to the end, its writes refused.
      const stopped = await Promise.race([waitForAlignment(res.json.id).then(() => "stopped"), new Promise((r) => setTimeout(() => r("still calling"), 4_000))]);
      expect(stopped).toBe("stopped");
      expect((await get(res.json.id)).json).toMatchObject({ status: "failed", error: "interrupted: the process working it stopped; start it again" });
    } finally {
      double.setLatency(0);
      delete process.env.JOB_VISIBILITY_TIMEOUT_SECONDS;
      resetConfig();
    }
  });
});

describe("bad input", () => {
  let d: Awaited<ReturnType<typeof dataset>>;
  beforeAll(async () => {
    d = await dataset("bad input");
  });

  it("404 for an unknown metric, 422 naming why there is no truth, 400 for a malformed body; nothing is stored", async () => {
    expect((await start({ pipeline_node_id: 999999, truth: "labels", strategies: ["few_shot"] })).status).toBe(404);
    const noLabels = await start({ pipeline_node_id: d.metricId, truth: "labels", strategies: ["few_shot"] });
    expect(noLabels.status).toBe(422);
    expect(noLabels.json.error.message).toMatch(/no labels with a verdict/);
    const threshold = await start({ pipeline_node_id: d.metricId, truth: "reference", strategies: ["threshold"] });
    expect(threshold.status).toBe(422);
    expect(threshold.json.error.message).toMatch(/threshold needs a score metric/);
    expect((await start({ pipeline_node_id: d.metricId, truth: "gold", strategies: ["few_shot"] })).status).toBe(400);
    expect((await start({ pipeline_node_id: d.metricId, truth: "reference", strategies: [] })).status).toBe(400);
    expect((await start({ pipeline_node_id: d.metricId, truth: "reference", strategies: ["few_shot"], folds: 30 })).status).toBe(400);
    expect((await get(424242)).status).toBe(404);
    expect((await promoteIt(424242, { strategy: "few_shot" })).status).toBe(404);
    expect(double.count()).toBe(0);
  });
});
