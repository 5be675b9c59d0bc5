/**
 * Issue 51 through the routes, against the judge double as the target: generated conversations are named
 * `<source name> · repeat k` and listed in source order (each source's repeats in turn), the gate's cases
 * carry those names; "Evaluate and compare" runs say what made them and do not judge the source again when
 * a finished run of the same metrics over it exists; a run started by the CI gate says so.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as conversations from "@/app/api/datasets/[id]/conversations/route";
import * as gate from "@/app/api/evaluation-pipeline-executions/gate/route";
import * as executionItem from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as evaluate from "@/app/api/generations/[id]/evaluate/route";
import * as generationItem from "@/app/api/generations/[id]/route";
import * as generations from "@/app/api/generations/route";
import * as targets from "@/app/api/targets/route";
import { resetConfig } from "@/lib/config";
import { waitForExecution } from "@/lib/runner/run";
import { call } from "@/lib/testing/http/call";
import { startJudgeDouble, type JudgeDouble } from "@/lib/testing/judge-double/server";
import { loadSampleDataset, type LoadedSample } from "@/lib/testing/seed/sample";
import { waitForGeneration } from "./index";

let double: JudgeDouble;
let sample: LoadedSample;

beforeAll(async () => {
  double = await startJudgeDouble();
  process.env.OPENAI_BASE_URL = double.baseURL;
  resetConfig();
  sample = await loadSampleDataset({ name: "first day source" });
});
afterAll(async () => {
  delete process.env.OPENAI_BASE_URL;
  resetConfig();
  await double?.close();
});

const list = async (datasetId: number) => (await call(conversations.GET, "GET", "/x?limit=500", { params: { id: datasetId } })).json as Array<{ id: number; name: string | null; label: string }>;

describe("generated conversations keep their source's name, in source order (issue 51)", () => {
  it("named '<source name> · repeat k', listed by source then repeat; the gate's cases say the same names", async () => {
    const target = await call(targets.POST, "POST", "/api/targets", { body: { name: "names", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" } });
    expect(target.status, target.text).toBe(201);
    double.setDefault({ kind: "text", content: "Done and checked." });
    // Replies of varying latency, so the conversations finish out of source order.
    double.setLatency({ min: 0, max: 40 });
    const started = await call(generations.POST, "POST", "/api/generations", { body: { source_dataset_id: sample.datasetId, target_id: target.json.id, mode: "replay", repeats: 2 } });
    expect(started.status, started.text).toBe(202);
    await waitForGeneration(started.json.id);
    double.setLatency(0);
    const g = (await call(generationItem.GET, "GET", "/x", { params: { id: started.json.id } })).json;
    expect(g.status).toBe("completed");
    const sources = await list(sample.datasetId);
    const generated = await list(g.dataset_id);
    const expected = sources.flatMap((s) => [1, 2].map((k) => `${s.label} · repeat ${k}`));
    expect(generated.map((c) => c.name)).toEqual(expected);
    expect(generated.map((c) => c.label)).toEqual(expected);

    // The CI gate over a run of the generated dataset: its cases carry the same names, in the same order.
    const metric = await call(nodes.POST, "POST", "/x", { body: { dataset_id: g.dataset_id, name: "says checked", kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value: "checked" } } } });
    expect(metric.status, metric.text).toBe(201);
    const ran = await call(run.POST, "POST", "/x", { body: { dataset_id: g.dataset_id, pipeline_node_ids: [metric.json.id], trigger: "gate" } });
    expect(ran.status, ran.text).toBe(202);
    await waitForExecution(ran.json.id);
    const e = (await call(executionItem.GET, "GET", "/x", { params: { id: ran.json.id } })).json;
    expect(e.meta).toMatchObject({ trigger: "gate", pipeline_node_ids: [metric.json.id] });
    const report = await call(gate.GET, "GET", `/x?runs=${ran.json.id}`);
    expect(report.status, report.text).toBe(200);
    expect(report.json.cases.map((c: { conversation: string }) => c.conversation)).toEqual(expected);
    expect((await call(run.POST, "POST", "/x", { body: { dataset_id: g.dataset_id, trigger: "somebody" } })).status).toBe(400);
  });
});

describe("Evaluate and compare (issue 51.4)", () => {
  it("says what made its runs, and reads a finished run of the same metrics over the source instead of judging it again", async () => {
    const target = await call(targets.POST, "POST", "/api/targets", { body: { name: "compare", kind: "openai_chat", url: double.baseURL, model: "gpt-4o-mini" } });
    double.setDefault({ kind: "text", content: "All of it is checked now." });
    const started = await call(generations.POST, "POST", "/api/generations", { body: { source_dataset_id: sample.datasetId, target_id: target.json.id, mode: "replay" } });
    await waitForGeneration(started.json.id);
    const metric = await call(nodes.POST, "POST", "/x", { body: { dataset_id: sample.datasetId, name: "mentions checked", kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value: "checked" } } } });
    expect(metric.status, metric.text).toBe(201);
    const first = await call(evaluate.POST, "POST", "/x", { params: { id: started.json.id }, body: { pipeline_node_ids: [metric.json.id] } });
    expect(first.status, first.text).toBe(202);
    expect(first.json.source_reused).toBe(false);
    for (const e of [first.json.source_execution, first.json.generated_execution]) {
      expect(e.meta).toMatchObject({ trigger: `generation:${started.json.id}`, pipeline_node_ids: [expect.any(Number)] });
      await waitForExecution(e.id);
    }
    const again = await call(evaluate.POST, "POST", "/x", { params: { id: started.json.id }, body: { pipeline_node_ids: [metric.json.id] } });
    expect(again.status, again.text).toBe(202);
    expect(again.json.source_reused).toBe(true);
    expect(again.json.source_execution.id).toBe(first.json.source_execution.id);
    expect(again.json.generated_execution.id).not.toBe(first.json.generated_execution.id);
    await waitForExecution(again.json.generated_execution.id);
  });
});
