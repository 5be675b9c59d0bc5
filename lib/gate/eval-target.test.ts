/**
 * Issue 38.1: `turnscope eval --target --mode --repeats` as a subprocess against the API over HTTP (the
 * route handlers behind a real server, the runs and the generation worked in this process, the judge
 * test double standing in for the target model): the dataset is generated first, the generated one judged
 * with copies of the metrics, and the source's run compared by source conversation. Exit 0, 1 and 2.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { writeConversations } from "@/db/repositories/conversation-writes";
import { lockRow, transaction } from "@/db/store";
import { createDataset } from "@/lib/datasets";
import { waitForExecution } from "@/lib/runner/run";
import { call } from "@/lib/testing/http/call";
import type { JudgeDouble } from "@/lib/testing/judge-double/server";
import { withJudgeDouble } from "@/lib/testing/judge-double/with-judge-double";
import * as me from "@/app/api/me/route";
import * as datasetItem from "@/app/api/datasets/[id]/route";
import * as nodes from "@/app/api/evaluation-pipeline-nodes/route";
import * as run from "@/app/api/evaluation-pipeline-executions/run/route";
import * as executions from "@/app/api/evaluation-pipeline-executions/route";
import * as execution from "@/app/api/evaluation-pipeline-executions/[id]/route";
import * as gate from "@/app/api/evaluation-pipeline-executions/gate/route";
import * as compare from "@/app/api/evaluation-pipeline-executions/compare/route";
import * as generations from "@/app/api/generations/route";
import * as generation from "@/app/api/generations/[id]/route";
import * as targets from "@/app/api/targets/route";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const routes: Array<[RegExp, Handler]> = [
  [/^\/api\/me$/, me.GET],
  [/^\/api\/datasets\/(?<id>\d+)$/, datasetItem.GET],
  [/^\/api\/evaluation-pipeline-nodes$/, (r, c) => (r.method === "POST" ? nodes.POST(r, c) : nodes.GET(r, c))],
  [/^\/api\/evaluation-pipeline-executions\/run$/, run.POST],
  [/^\/api\/evaluation-pipeline-executions\/gate$/, gate.GET],
  [/^\/api\/evaluation-pipeline-executions\/compare$/, compare.GET],
  [/^\/api\/evaluation-pipeline-executions$/, executions.GET],
  [/^\/api\/evaluation-pipeline-executions\/(?<id>\d+)$/, execution.GET],
  [/^\/api\/generations$/, generations.POST],
  [/^\/api\/generations\/(?<id>\d+)$/, generation.GET],
];

let server: http.Server;
let url = "";
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const u = new URL(req.url ?? "/", "http://127.0.0.1");
        const found = routes.map(([re, h]) => [u.pathname.match(re), h] as const).find(([m]) => m);
        if (!found) return void res.writeHead(404).end();
        const headers = Object.fromEntries(Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === "string"));
        const body = req.method === "GET" ? undefined : Buffer.concat(chunks);
        const response = await found[1](new Request(u, { method: req.method, headers, body }), { params: Promise.resolve({ ...found[0]!.groups }) });
        res.writeHead(response.status, Object.fromEntries(response.headers.entries())).end(Buffer.from(await response.arrayBuffer()));
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const judgeDouble = withJudgeDouble({ JUDGE_MAX_RETRIES: "0" });
let double: JudgeDouble;
beforeEach(() => {
  double = judgeDouble();
});

/** `turnscope eval …` as a CI step runs it. */
function turnscope(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(process.cwd(), "bin", "turnscope.mjs"), "eval", "--url", url, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stderr }));
  });
}

/** Three orders, two booked; a check metric `booked`; a finished run of it to be the baseline. */
async function source(): Promise<{ datasetId: number; baseline: number }> {
  const d = await createDataset({ name: "orders", userId: "default" });
  const conversations = [0, 1, 2].map((i) => ({
    name: `order ${i}`,
    description: null,
    meta: null,
    agents: null,
    messages: [
      { role: "user" as const, content: `Please book order ${i}`, meta: null, steps: [] },
      { role: "assistant" as const, content: i < 2 ? `Order ${i} is booked.` : `Order ${i} failed.`, meta: null, steps: [] },
    ],
  }));
  await transaction(function* () {
    yield* lockRow("datasets", d.id);
    return yield* writeConversations(d.id, conversations.map((conversation) => ({ conversation })), new Date().toISOString());
  });
  const metric = await call(nodes.POST, "POST", "/x", { body: { dataset_id: d.id, name: "booked", kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value: "booked" } } } });
  expect(metric.status, metric.text).toBe(201);
  const started = await call(run.POST, "POST", "/x", { body: { dataset_id: d.id } });
  expect(started.status, started.text).toBe(202);
  await waitForExecution(started.json.id);
  return { datasetId: d.id, baseline: started.json.id };
}

async function target(targetUrl: string): Promise<number> {
  const res = await call(targets.POST, "POST", "/x", { body: { name: "agent", kind: "openai_chat", url: targetUrl, model: "gpt-4o-mini" } });
  expect(res.status, res.text).toBe(201);
  return res.json.id;
}

describe("turnscope eval --target --mode --repeats (issue 38.1)", () => {
  it("generates first, judges the generated dataset and compares it with the source by source conversation", async () => {
    const { datasetId, baseline } = await source();
    const targetId = await target(double.baseURL);
    double.setDefault({ kind: "text", content: "Your order is booked." });
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-target-"));
    const md = path.join(out, "comment.md");
    const json = path.join(out, "report.json");
    const passed = await turnscope(["--dataset", String(datasetId), "--target", String(targetId), "--mode", "replay", "--repeats", "2", "--metric", "booked", "--min", "booked=1", "--baseline", String(baseline), "--markdown", md, "--json", json]);
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.stderr).toMatch(/generation \d+ \(replay against target \d+, 2 per conversation\)/);
    const report = JSON.parse(fs.readFileSync(json, "utf8"));
    // 3 source conversations × 2 repeats, each judged once by the copy of `booked` in the generated dataset.
    expect(report.dataset.id).not.toBe(datasetId);
    expect(report.dataset.conversations).toBe(6);
    expect(report.metrics).toMatchObject([{ name: "booked", cases: 6, passed: 6, status: "pass" }]);
    expect(report.generation).toMatchObject({ source_dataset_id: datasetId, dataset_id: report.dataset.id, mode: "replay" });
    // By source: 2 of 3 booked in the source, every repeat booked now; the failing order now passes in both repeats.
    expect(report.generation.by_source.metrics).toMatchObject([{ name: "booked", pairs: 3, repeats: 2, worse: 0, better: 1, pass_hat_k: 1, pass_at_k: 1 }]);
    expect(report.generation.by_source.metrics[0].a_pass_rate).toBeCloseTo(2 / 3, 9);
    const comment = fs.readFileSync(md, "utf8");
    expect(comment).toContain("**Against the source**");
    expect(comment).toContain("| booked | 0.667 | 1.000 | 0 | 1 |");
  });

  it("the Markdown and JUnit with --target and --baseline (issue 51): the baseline shown, columns that mean one thing, the flipped cases named '<source> · repeat k'", async () => {
    const { datasetId, baseline } = await source();
    const targetId = await target(double.baseURL);
    double.setDefault({ kind: "text", content: "Sorry, that did not work." });
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-target-md-"));
    const md = path.join(out, "comment.md");
    const xml = path.join(out, "results.xml");
    const ran = await turnscope(["--dataset", String(datasetId), "--target", String(targetId), "--mode", "replay", "--metric", "booked", "--baseline", String(baseline), "--markdown", md, "--junit", xml]);
    expect(ran.code, ran.stderr).toBe(0);
    const comment = fs.readFileSync(md, "utf8");
    expect(comment).toMatch(new RegExp(`baseline \\[${baseline}\\]\\(${url.replace(/[.:/]/g, "\\$&")}/executions/${baseline}\\) \\(a run of the source, compared by source conversation below\\)`));
    expect(comment).not.toContain("baseline —");
    expect(comment).toContain("| metric | baseline mean | mean now | mean delta (95% CI) | pass → fail | passed now | gate |");
    expect(comment).toContain("| metric | pass rate in the source | pass rate now | pass → fail | fail → pass | mean delta | pass^k | pass@k |");
    // Orders 0 and 1 were booked in the source; their generated replies are not: listed by their generated names.
    expect(comment).toContain("**Passed in the baseline, fail now:**");
    expect(comment).toMatch(/- booked · order 0 · repeat 1 \(#\d+\): /);
    expect(comment).toMatch(/- booked · order 1 · repeat 1 \(#\d+\): /);
    expect(comment).not.toContain("order 2 · repeat 1 (#");
    const junit = fs.readFileSync(xml, "utf8");
    expect([...junit.matchAll(/<testcase classname="turnscope\.booked" name="([^"]+) \(#\d+\)"/g)].map((m) => m[1])).toEqual(["order 0 · repeat 1", "order 1 · repeat 1", "order 2 · repeat 1"]);
    // The run says the CI gate made it.
    const runId = Number(ran.stderr.match(/▸ run (\d+)/)?.[1]);
    expect((await call(execution.GET, "GET", "/x", { params: { id: runId } })).json.meta.trigger).toBe("gate");
  });

  it("exit 1 when the generated replies miss a minimum, 2 when the target answers nothing", async () => {
    const { datasetId } = await source();
    const targetId = await target(double.baseURL);
    double.setDefault({ kind: "text", content: "Sorry, that did not work." });
    const failed = await turnscope(["--dataset", String(datasetId), "--target", String(targetId), "--mode", "replay", "--min", "booked=1"]);
    expect(failed.code, failed.stderr).toBe(1);

    const unreachable = await target("http://127.0.0.1:9/v1");
    const nothing = await turnscope(["--dataset", String(datasetId), "--target", String(unreachable), "--mode", "replay"]);
    expect(nothing.code, nothing.stderr).toBe(2);
    expect(nothing.stderr).toMatch(/generation \d+ ended failed/);

    // A pairwise metric is left out of "every metric", and refused by name (a comparison judges it).
    const pairwise = await call(nodes.POST, "POST", "/x", { body: { dataset_id: datasetId, name: "better reply", evaluation_level: "conversation", output_type: "pairwise", prompt: "Which is better?" } });
    expect(pairwise.status, pairwise.text).toBe(201);
    const named = await turnscope(["--dataset", String(datasetId), "--metric", "better reply"]);
    expect([named.code, named.stderr]).toEqual([2, expect.stringContaining("is judged by a comparison")]);
    const all = await turnscope(["--dataset", String(datasetId)]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stderr).not.toContain("better reply");

    const badMode = await turnscope(["--dataset", String(datasetId), "--target", String(targetId), "--mode", "rewind"]);
    expect([badMode.code, badMode.stderr]).toEqual([2, expect.stringContaining("--mode must be next_turn, replay or simulate")]);
  });
});
