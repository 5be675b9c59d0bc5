/**
 * Issue 38: `npx turnscope eval` as a pipeline runs it — a subprocess against the served production build —
 * with its one exit contract: 0 every gate holds, 1 a threshold or a regression failed, 2 it could not
 * evaluate (a wrong key, an unreachable server, a stopped judge, an empty dataset, a baseline that does not
 * exist). The JUnit report is read back by a JUnit/XML parser with the right counts.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { XMLParser } from "fast-xml-parser";
import { guardedURL as guarded, judge } from "./workspace-helpers";

const base = `http://127.0.0.1:${process.env.E2E_PORT ?? 3210}`;
const root = path.join(__dirname, "..");

type Outcome = { code: number | null; stderr: string };

/**
 * `turnscope eval …` as a CI step runs it, the key from the environment: through `npx` (`via: "npx"`), or the
 * package's bin file with node — what npx runs, without npm's own start-up (~1.5 s of CPU a call). The first
 * call of each test goes through npx; e2e/ci-workflow.spec.ts runs the documented workflow's npx commands.
 */
function turnscope(args: string[], env: Record<string, string> = {}, via: "npx" | "node" = "node"): Promise<Outcome> {
  return new Promise((resolve) => {
    const command = via === "npx" ? ["npx", "--no-install", "turnscope"] : [process.execPath, path.join(root, "bin", "turnscope.mjs")];
    const child = spawn(command[0], [...command.slice(1), "eval", ...args], {
      cwd: root,
      env: { ...process.env, TURNSCOPE_URL: base, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stderr }));
  });
}

function dataset(tag: string): string {
  const conversations = Array.from({ length: 6 }, (_, i) => ({
    name: `order ${i}`,
    messages: [
      { role: "user", content: `Please book order ${i} (${tag})` },
      { role: "assistant", content: i < 4 ? `Your order ${i} is booked.` : `Sorry, order ${i} failed.` },
    ],
  }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-gate-"));
  const file = path.join(dir, "orders.json");
  fs.writeFileSync(file, JSON.stringify({ conversations }));
  return file;
}

async function check(request: APIRequestContext, datasetId: number, name: string, value: string): Promise<number> {
  const res = await request.post(`${base}/api/evaluation-pipeline-nodes`, { data: { dataset_id: datasetId, name, kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value } } } });
  expect(res.status(), await res.text()).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", isArray: (name) => name === "testsuite" || name === "testcase" });
type Suite = { name: string; tests: string; failures: string; errors: string; testcase: Array<{ name: string; failure?: unknown }> };
const readJunit = (file: string) => parser.parse(fs.readFileSync(file, "utf8")).testsuites as { tests: string; failures: string; errors: string; testsuite: Suite[] };

test.describe("npx turnscope eval (issue 38)", () => {
  test("exit 0 when every gate holds, 1 on a threshold and on a regression, with JUnit, JSON and Markdown", async ({ request }) => {
    test.setTimeout(180_000);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-gate-out-"));
    // A file imported by the command itself; then its metrics are added by id for the other runs.
    const file = dataset(`gate-${Date.now()}`);
    const imported = await request.post(`${base}/api/datasets/import`, { multipart: { file: { name: "orders.json", mimeType: "application/json", buffer: fs.readFileSync(file) }, name: `gate ${Date.now()}` } });
    expect(imported.status()).toBe(201);
    const datasetId = ((await imported.json()) as { dataset: { id: number } }).dataset.id;
    const polite = await check(request, datasetId, "mentions the order", "order");
    await check(request, datasetId, "booked", "booked");

    const pass = await turnscope(["--dataset", String(datasetId), "--metric", "mentions the order", "--junit", path.join(out, "pass.xml"), "--json", path.join(out, "pass.json")], {}, "npx");
    expect(pass.code, pass.stderr).toBe(0);
    expect(pass.stderr).toMatch(/executions\/\d+/);
    const passJunit = readJunit(path.join(out, "pass.xml"));
    expect(passJunit).toMatchObject({ tests: "6", failures: "0", errors: "0" });
    expect(passJunit.testsuite[0].testcase).toHaveLength(6);
    const passReport = JSON.parse(fs.readFileSync(path.join(out, "pass.json"), "utf8")) as { dataset: { id: number; hash: string }; runs: number[] };
    expect(passReport.dataset).toMatchObject({ id: datasetId, hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });

    // A per-case minimum the data misses: two orders are not booked.
    const threshold = await turnscope(["--dataset", String(datasetId), "--metric", "booked", "--min", "booked=1", "--junit", path.join(out, "fail.xml")]);
    expect(threshold.code, threshold.stderr).toBe(1);
    const failJunit = readJunit(path.join(out, "fail.xml"));
    expect(failJunit).toMatchObject({ tests: "6", failures: "2", errors: "0" });
    expect(failJunit.testsuite[0].testcase.filter((c) => c.failure !== undefined).map((c) => c.name).sort()).toEqual([expect.stringContaining("order 4"), expect.stringContaining("order 5")]);

    // A regression: the same metric made stricter fails two cases that passed in the baseline.
    const changed = await request.patch(`${base}/api/evaluation-pipeline-nodes/${polite}`, { data: { check: { type: "text_contains", params: { value: "booked" } } } });
    expect(changed.status(), await changed.text()).toBe(200);
    const regression = await turnscope(["--dataset", String(datasetId), "--metric", String(polite), "--baseline", String(passReport.runs[0]), "--markdown", path.join(out, "pr.md"), "--json", path.join(out, "regression.json")]);
    expect(regression.code, regression.stderr).toBe(1);
    const md = fs.readFileSync(path.join(out, "pr.md"), "utf8");
    expect(md).toContain("| metric | baseline mean | mean now | mean delta (95% CI) | pass → fail | passed now | gate |");
    expect(md).toContain("Passed in the baseline, fail now");
    const report = JSON.parse(fs.readFileSync(path.join(out, "regression.json"), "utf8")) as { metrics: Array<{ baseline: { pass_to_fail: number; fail_to_pass: number; regressed: boolean } }> };
    expect(report.metrics[0].baseline).toMatchObject({ pass_to_fail: 2, fail_to_pass: 0, regressed: true });

    // `--baseline latest` and a config file in the repository: the same gate from turnscope.eval.json.
    const config = path.join(out, "turnscope.eval.json");
    fs.writeFileSync(config, JSON.stringify({ dataset: datasetId, metrics: ["booked"], min: { booked: 0.5 }, threshold: "mean", baseline: "latest" }));
    const fromConfig = await turnscope(["--config", config]);
    expect(fromConfig.code, fromConfig.stderr).toBe(0);
  });

  test("exit 2 when it could not evaluate: a baseline that does not exist, a wrong key, an unreachable server, an empty dataset, a stopped judge", async ({ request }) => {
    test.setTimeout(180_000);
    const file = dataset(`gate2-${Date.now()}`);

    const missingBaseline = await turnscope(["--dataset", file, "--baseline", "999999"], {}, "npx");
    expect(missingBaseline.code, missingBaseline.stderr).toBe(2);

    const wrongKey = await turnscope(["--dataset", file], { TURNSCOPE_URL: guarded, TURNSCOPE_API_KEY: "not-the-token" });
    expect(wrongKey.code, wrongKey.stderr).toBe(2);
    expect(wrongKey.stderr).toContain("refused the credential (401)");

    const unreachable = await turnscope(["--dataset", file], { TURNSCOPE_URL: "http://127.0.0.1:9" });
    expect(unreachable.code, unreachable.stderr).toBe(2);
    expect(unreachable.stderr).toContain("cannot reach");

    const empty = await request.post(`${base}/api/datasets`, { data: { name: `empty ${Date.now()}` } });
    const emptyId = ((await empty.json()) as { id: number }).id;
    await check(request, emptyId, "anything", "x");
    const nothing = await turnscope(["--dataset", String(emptyId)]);
    expect(nothing.code, nothing.stderr).toBe(2);

    // An LLM metric while the judge answers only 500s: every cell fails, so nothing was evaluated.
    const imported = await request.post(`${base}/api/datasets/import`, { multipart: { file: { name: "orders.json", mimeType: "application/json", buffer: fs.readFileSync(file) }, name: `judged ${Date.now()}` } });
    const judgedId = ((await imported.json()) as { dataset: { id: number } }).dataset.id;
    const metric = await request.post(`${base}/api/evaluation-pipeline-nodes`, { data: { dataset_id: judgedId, name: "helpful", evaluation_level: "conversation", output_type: "progress", prompt: "Was the assistant helpful?\n@HISTORY" } });
    expect(metric.status()).toBe(201);
    await request.post(`${judge}/default`, { data: { kind: "server_error" } });
    try {
      const stopped = await turnscope(["--dataset", String(judgedId), "--metric", "helpful"]);
      expect(stopped.code, stopped.stderr).toBe(2);
      expect(stopped.stderr).toContain("every cell failed");
    } finally {
      await request.post(`${judge}/reset`);
    }
  });
});
