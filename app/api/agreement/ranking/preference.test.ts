/**
 * Issue 49: a preference file becomes pairs a comparison reads. The gzip-compressed `chosen` / `rejected`
 * transcripts (lib/import/mapping/fixtures/preference-pairs.jsonl) are imported with the mapping the refusal
 * offers; each pair's two last replies carry `meta.parent_id` (the pair) and `meta.rank` (0 chosen, 1 not), so a
 * siblings comparison pairs exactly them, and GET /api/agreement/ranking?a=comparison:<id> says how often the
 * pairwise judge chose as the people did. The judge is the test double (lib/testing/judge-double), scripted:
 * it prefers the chosen reply of two pairs and the rejected one of the third — agreement 2 of 3.
 */
import fs from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { beforeEach, describe, expect, it } from "vitest";
import { waitForComparison } from "@/lib/comparisons";
import { call } from "@/lib/testing/http/call";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as comparisons from "@/app/api/comparisons/route";
import * as comparison from "@/app/api/comparisons/[id]/route";
import * as ranking from "./route";

const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0", JUDGE_TIMEOUT_FLOOR_MS: "120000" });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The judge picks the reply that starts with `text`, in whichever place it is shown. */
function prefer(d: JudgeDouble, text: string) {
  const start = escape(text.slice(0, 40));
  d.addRule({ match: new RegExp(`name="@CANDIDATE_A">[\\s\\S]{0,40}?${start}`), behaviour: { kind: "verdict", body: { winner: "A", reasoning: "A" } } });
  d.addRule({ match: new RegExp(`name="@CANDIDATE_B">[\\s\\S]{0,40}?${start}`), behaviour: { kind: "verdict", body: { winner: "B", reasoning: "B" } } });
}

describe("a preference file as pairs a comparison reads", () => {
  it("imports chosen/rejected transcripts with the offered mapping, pairs each record's two replies, and reports the judge's agreement with the people's choices", async () => {
    const file = new Uint8Array(gzipSync(fs.readFileSync(path.resolve(process.cwd(), "lib/import/mapping/fixtures/preference-pairs.jsonl"))));
    const refused = await upload(createAndImport.POST, "/api/datasets/import", { file, filename: "train.jsonl.gz", fields: { name: "preferences" } });
    expect(refused.status).toBe(415);
    const mapping = refused.json.llm_feedback.suggested_mapping;
    expect(mapping).toMatchObject({ version: 2, records: { container: "gzip" }, conversations: { from: "pair", chosen: "a" } });
    const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, filename: "train.jsonl.gz", fields: { name: "preferences", mapping: JSON.stringify(mapping) } });
    expect(imported.status, imported.text).toBe(201);
    const datasetId = imported.json.dataset_id;

    const created = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
      body: { dataset_id: datasetId, evaluation_level: "message", name: "Better reply", prompt: "Which reply is better?\n@CANDIDATE_A\n@CANDIDATE_B", output_type: "pairwise" },
    });
    expect(created.status, created.text).toBe(201);
    // People chose the first of each pair; the judge agrees on basil and the lock, not on the cat's name.
    for (const reply of ["Give it a sunny window", "I can't help with getting into", "Cat."]) prefer(double, reply);

    const started = await call(comparisons.POST, "POST", "/api/comparisons", { body: { pipeline_node_id: created.json.id, a: `dataset:${datasetId}`, pair_by: "siblings" } });
    expect(started.status, started.text).toBe(202);
    await waitForComparison(started.json.id);
    const done = (await call(comparison.GET, "GET", "/x", { params: { id: started.json.id } })).json;
    // One pair per record (the two last replies), each judged in both orders.
    expect(done).toMatchObject({ status: "completed", pairs: 3, ties: 0, consistency: 1, judge_calls: 6, failed: 0 });

    const res = await call(ranking.GET, "GET", `/api/agreement/ranking?dataset_id=${datasetId}&pipeline_node_id=${created.json.id}&a=comparison:${done.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ pairs: 3, groups: 3, items: 6, ties: 0 });
    expect(res.json.pairwise_accuracy).toBeCloseTo(2 / 3, 12);
    expect(res.json.discordant).toHaveLength(1);
  }, 120_000);
});
