/**
 * Issue 38.6: the GitHub Actions workflow of docs/ci.md, run as written. Its YAML is read from the doc,
 * each step's `run:` commands executed as subprocesses in a workspace the way a runner does (bash -eo
 * pipefail, the step's env, `if: always()` honoured after a failure), with only what the doc says is
 * adapted here: the served build of these tests stands for the clone and `npm start` (its URL for
 * localhost:3000), and `gh` is a stub that keeps the comment it was asked to post.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { parse } from "yaml";

const base = `http://127.0.0.1:${process.env.E2E_PORT ?? 3210}`;
const root = path.join(__dirname, "..");

type Step = { name?: string; uses?: string; run?: string; if?: string; env?: Record<string, string>; with?: unknown };
type Workflow = { on: unknown; jobs: Record<string, { "runs-on": string; steps: Step[] }> };

/** The workflow exactly as docs/ci.md shows it. */
function documentedWorkflow(): Workflow {
  const doc = fs.readFileSync(path.join(root, "docs", "ci.md"), "utf8");
  const section = doc.split("## A GitHub Actions workflow")[1] ?? "";
  const yaml = section.match(/```yaml\n([\s\S]*?)```/)?.[1];
  if (!yaml) throw new Error("docs/ci.md has no ```yaml block under “A GitHub Actions workflow”");
  return parse(yaml) as Workflow;
}

/** The values a runner puts in for `${{ … }}`; an expression the test does not know fails it (the doc changed). */
function expand(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    if (!(expr in values)) throw new Error(`the workflow uses \${{ ${expr} }}, which this test does not provide`);
    return values[expr];
  });
}

/** What docs/ci.md says the suite adapts: no clone or npm start (the served build runs already), its URL for localhost:3000. */
function adapt(run: string): string {
  const host = new URL(base).host;
  return run
    .split("\n")
    .filter((line) => !/git clone|npm start/.test(line))
    .join("\n")
    .replaceAll("localhost:3000", host);
}

type StepOutcome = { name: string; code: number | null; stderr: string; skipped: boolean };

function bash(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    // GitHub's default shell for `run`: bash --noprofile --norc -eo pipefail.
    const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stderr }));
  });
}

/** Run the job's steps in order as a runner would; the outcome of each. */
async function runJob(workflow: Workflow, workspace: string, env: Record<string, string>): Promise<StepOutcome[]> {
  const values = { "vars.TURNSCOPE_REPO": root, "secrets.OPENAI_API_KEY": "test-key", "github.event.pull_request.number": "38", "github.token": "test-token" };
  const out: StepOutcome[] = [];
  let failed = false;
  for (const step of Object.values(workflow.jobs)[0].steps) {
    if (!step.run) continue; // `uses:` steps (checkout, setup-node): the workspace and this Node stand for them.
    const name = step.name ?? step.run;
    if (failed && step.if?.trim() !== "always()") {
      out.push({ name, code: null, stderr: "", skipped: true });
      continue;
    }
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(String(v), values)]));
    const result = await bash(adapt(expand(step.run, values)), workspace, { ...env, ...stepEnv });
    out.push({ name, ...result, skipped: false });
    if (result.code !== 0) failed = true;
  }
  return out;
}

/** A workspace as the checkout leaves it: the repository's turnscope.eval.json; `turnscope` where the clone would be; `gh` a stub. */
function workspace(config: Record<string, unknown>): { dir: string; env: Record<string, string>; comments: () => Array<{ args: string[]; body: string }> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-ci-"));
  fs.writeFileSync(path.join(dir, "turnscope.eval.json"), JSON.stringify(config));
  // Where the clone would be: a folder of its own (so `..` from it is the workspace) holding links to what `npx turnscope` runs.
  fs.mkdirSync(path.join(dir, "turnscope"));
  for (const entry of ["package.json", "bin", "node_modules"]) fs.symlinkSync(path.join(root, entry), path.join(dir, "turnscope", entry));
  const bin = path.join(dir, ".bin");
  fs.mkdirSync(bin);
  const log = path.join(dir, "gh-calls.jsonl");
  fs.writeFileSync(
    path.join(bin, "gh"),
    `#!/usr/bin/env node\nconst fs = require("fs");\nconst args = process.argv.slice(2);\nconst i = args.indexOf("--body-file");\nfs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ args, body: i >= 0 ? fs.readFileSync(args[i + 1], "utf8") : null }) + "\\n");\n`,
    { mode: 0o755 },
  );
  return {
    dir,
    env: { PATH: `${bin}:${process.env.PATH}`, TURNSCOPE_URL: base },
    comments: () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { args: string[]; body: string }) : []),
  };
}

async function datasetWithChecks(request: APIRequestContext): Promise<number> {
  const conversations = Array.from({ length: 4 }, (_, i) => ({
    name: `order ${i}`,
    messages: [
      { role: "user", content: `Please book order ${i}` },
      { role: "assistant", content: i < 3 ? `Your order ${i} is booked.` : `Sorry, order ${i} failed.` },
    ],
  }));
  const imported = await request.post(`${base}/api/datasets/import`, {
    multipart: { file: { name: "orders.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify({ conversations })) }, name: `ci workflow ${Date.now()}` },
  });
  expect(imported.status()).toBe(201);
  const datasetId = ((await imported.json()) as { dataset: { id: number } }).dataset.id;
  for (const [name, value] of [["mentions the order", "order"], ["booked", "booked"]]) {
    const res = await request.post(`${base}/api/evaluation-pipeline-nodes`, { data: { dataset_id: datasetId, name, kind: "check", evaluation_level: "conversation", check: { type: "text_contains", params: { value } } } });
    expect(res.status(), await res.text()).toBe(201);
  }
  return datasetId;
}

// @store-independent: the doc's commands run as a CI runner would; the gate itself runs on both stores (e2e/gate.spec.ts).
test.describe("the CI workflow of docs/ci.md (issue 38.6)", { tag: "@store-independent" }, () => {
  test("its commands run as written: the gate passes and the Markdown is posted; a failing gate exits 1 and is still posted", async ({ request }) => {
    test.setTimeout(180_000);
    const workflow = documentedWorkflow();
    expect(Object.values(workflow.jobs)[0].steps.filter((s) => s.run).map((s) => s.name)).toEqual(["Start Turnscope", "Gate", "Comment"]);
    const datasetId = await datasetWithChecks(request);

    const passing = workspace({ dataset: datasetId, metrics: ["mentions the order"] });
    const passed = await runJob(workflow, passing.dir, passing.env);
    for (const step of passed) expect(step.code, `${step.name}: ${step.stderr}`).toBe(0);
    expect(passed.find((s) => s.name === "Gate")?.stderr).toMatch(/executions\/\d+/);
    expect(fs.readFileSync(path.join(passing.dir, "results.xml"), "utf8")).toContain('<testsuite name="mentions the order"');
    const posted = passing.comments();
    expect(posted).toHaveLength(1);
    expect(posted[0].args).toEqual(["pr", "comment", "38", "--body-file", "comment.md"]);
    expect(posted[0].body).toBe(fs.readFileSync(path.join(passing.dir, "comment.md"), "utf8"));
    expect(posted[0].body).toContain("| metric | baseline mean | mean now | mean delta (95% CI) | pass → fail | passed now | gate |");
    expect(posted[0].body).toMatch(/\| mentions the order \|.*✅/);

    // One order in four is not booked: a per-case minimum of 1 fails the gate, and the comment still goes out.
    const failing = workspace({ dataset: datasetId, metrics: ["booked"], min: { booked: 1 } });
    const failed = await runJob(workflow, failing.dir, failing.env);
    expect(failed.map((s) => [s.name, s.code])).toEqual([
      ["Start Turnscope", 0],
      ["Gate", 1],
      ["Comment", 0],
    ]);
    const failedComment = failing.comments()[0]?.body ?? "";
    expect(failedComment).toMatch(/\| booked \|.*❌ below per-case minimum 1/);
  });
});
