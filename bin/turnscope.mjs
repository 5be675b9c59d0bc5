#!/usr/bin/env node
// `npx turnscope eval`: a CI gate that is a thin client of a running Turnscope server's REST API.
// Exit status: 0 every gate holds; 1 a threshold or a regression failed; 2 it could not evaluate
// (refused credential, unreachable server or judge, nothing evaluated, a baseline that does not exist).
// The verdict (cases, thresholds, McNemar, bootstrap, the dataset's fingerprint) is computed by the
// server (`GET /api/evaluation-pipeline-executions/gate`); this file asks, waits and writes the reports.
import fs from "node:fs";
import path from "node:path";

const HELP = `Usage: turnscope eval [options]

Runs metrics over a dataset on a Turnscope server and exits 0 (every gate holds), 1 (a threshold or a
regression failed) or 2 (it could not evaluate). Options may also come from a JSON config file
(--config, default ./turnscope.eval.json when it exists); flags win.

  --url <url>              server (TURNSCOPE_URL, default http://localhost:3000)
  --key <key>              API key or API_TOKEN (TURNSCOPE_API_KEY)
  --dataset <id|file>      a dataset id, or a file to import as a new dataset
  --metric <id|name>       a metric of the dataset (repeatable; default: all of them)
  --baseline <id|latest>   a finished run of the dataset to compare with (latest: the newest before this one)
  --min <metric>=<value>   minimum score of a metric (repeatable); checkbox metrics pass on true
  --threshold case|mean    the minimum holds per case (default) or for the mean
  --repeats <k>            judge k times; a case fails only when it fails every time (default 1);
                           with --target: generate k conversations per source conversation
  --target <id>            generate first: send the dataset's conversations to this target (POST /api/generations),
                           then evaluate the generated dataset with copies of the chosen metrics
  --mode <mode>            with --target: next_turn, replay or simulate (default replay)
  --max-turns <n>          with --mode simulate: user turns at most (default 10)
  --batch-size <n>         judge calls in flight (default 16)
  --timeout <seconds>      give up waiting for a run after this long (default 3600)
  --junit <file>           JUnit XML: one test case per conversation × metric
  --json <file>            the gate's report and the runs, as JSON
  --markdown <file>        a table for a pull-request comment
  --config <file>          a JSON file with the same settings (dataset, metrics, baseline, min: {name: value}, …)
`;

class Stop extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}
const couldNot = (message) => new Stop(2, message);
const log = (line) => process.stderr.write(`${line}\n`);

function parseArgs(argv) {
  const out = { metric: [], min: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help") out.help = true;
    else if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
      const value = inline ?? argv[++i];
      if (value === undefined) throw couldNot(`--${name} needs a value`);
      const key = name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
      if (key === "metric" || key === "min") out[key].push(value);
      else out[key] = value;
    } else (out._ ??= []).push(arg);
  }
  return out;
}

function settings(argv) {
  const flags = parseArgs(argv);
  if (flags.help) return { help: true };
  const configPath = flags.config ?? (fs.existsSync("turnscope.eval.json") ? "turnscope.eval.json" : undefined);
  let file = {};
  if (configPath) {
    try {
      file = JSON.parse(fs.readFileSync(configPath, "utf8"));
    } catch (error) {
      throw couldNot(`cannot read the config ${configPath}: ${error.message}`);
    }
  }
  const mins = { ...(file.min ?? {}) };
  for (const pair of flags.min) {
    const [metric, value] = pair.split(/=(?=[^=]*$)/);
    if (!metric || value === undefined || !Number.isFinite(Number(value))) throw couldNot(`--min ${pair}: write <metric>=<number>`);
    mins[metric] = Number(value);
  }
  const s = {
    url: (flags.url ?? file.url ?? process.env.TURNSCOPE_URL ?? "http://localhost:3000").replace(/\/+$/, ""),
    key: flags.key ?? file.key ?? process.env.TURNSCOPE_API_KEY,
    dataset: flags.dataset ?? file.dataset,
    metrics: flags.metric.length ? flags.metric : (file.metrics ?? []).map(String),
    baseline: flags.baseline ?? file.baseline,
    mins,
    threshold: flags.threshold ?? file.threshold ?? "case",
    repeats: Number(flags.repeats ?? file.repeats ?? 1),
    batchSize: Number(flags.batchSize ?? file.batch_size ?? 16),
    timeoutS: Number(flags.timeout ?? file.timeout ?? 3600),
    junit: flags.junit ?? file.junit,
    json: flags.json ?? file.json,
    markdown: flags.markdown ?? file.markdown,
    target: flags.target ?? file.target,
    mode: flags.mode ?? file.mode ?? "replay",
    maxTurns: flags.maxTurns ?? file.max_turns,
    configDir: configPath ? path.dirname(configPath) : ".",
  };
  if (s.dataset === undefined) throw couldNot("--dataset is required (an id, or a file to import)");
  if (!["case", "mean"].includes(s.threshold)) throw couldNot("--threshold must be case or mean");
  if (!Number.isInteger(s.repeats) || s.repeats < 1 || s.repeats > 10) throw couldNot("--repeats must be an integer from 1 to 10");
  if (!Number.isInteger(s.batchSize) || s.batchSize < 1) throw couldNot("--batch-size must be a positive integer");
  if (s.target !== undefined && !/^\d+$/.test(String(s.target))) throw couldNot(`--target ${s.target}: a target id`);
  if (s.target !== undefined && !["next_turn", "replay", "simulate"].includes(s.mode)) throw couldNot("--mode must be next_turn, replay or simulate");
  if (s.target === undefined && (flags.mode ?? file.mode) !== undefined) throw couldNot("--mode goes with --target");
  return s;
}

function client(s) {
  const headers = s.key ? { authorization: `Bearer ${s.key}` } : {};
  return async (method, urlPath, body) => {
    let res;
    try {
      res = await fetch(`${s.url}/api${urlPath}`, {
        method,
        headers: { ...headers, ...(body !== undefined && !(body instanceof FormData) ? { "content-type": "application/json" } : {}) },
        body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
      });
    } catch (error) {
      throw couldNot(`cannot reach ${s.url}: ${error.cause?.message ?? error.message}`);
    }
    const text = await res.text();
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (res.status === 401) throw couldNot(`the server refused the credential (401): ${json?.error?.message ?? "set --key or TURNSCOPE_API_KEY"}`);
    if (res.status === 403) throw couldNot(`the credential may not do this (403): ${json?.error?.message ?? ""}`);
    if (res.status === 429) throw couldNot(`the server refuses this client for now (429): ${json?.error?.message ?? ""}`);
    return { status: res.status, json };
  };
}

const failure = (what, res) => couldNot(`${what}: ${res.status} ${res.json?.error?.message ?? JSON.stringify(res.json ?? "").slice(0, 300)}`);

async function resolveDataset(api, s) {
  if (/^\d+$/.test(String(s.dataset))) {
    const res = await api("GET", `/datasets/${s.dataset}`);
    if (res.status !== 200) throw failure(`dataset ${s.dataset}`, res);
    return res.json;
  }
  const file = path.resolve(s.configDir, String(s.dataset));
  if (!fs.existsSync(file)) throw couldNot(`--dataset ${s.dataset}: no such dataset id or file`);
  const form = new FormData();
  form.set("file", new Blob([fs.readFileSync(file)]), path.basename(file));
  form.set("name", `${path.basename(file)} (turnscope eval ${new Date().toISOString()})`);
  const res = await api("POST", "/datasets/import", form);
  if (res.status !== 201) throw failure(`import of ${file}`, res);
  log(`▸ imported ${file}: dataset ${res.json.dataset.id}, ${res.json.conversations_imported} conversations`);
  return res.json.dataset;
}

async function resolveMetrics(api, s, datasetId) {
  const res = await api("GET", `/evaluation-pipeline-nodes?dataset_id=${datasetId}`);
  if (res.status !== 200) throw failure("metrics", res);
  const all = res.json;
  const pick = (ref) => all.find((m) => String(m.id) === String(ref)) ?? all.find((m) => m.name === ref);
  // A pairwise metric compares two replies (POST /api/comparisons); a run cannot judge it, so "all" leaves it out.
  const chosen = s.metrics.length ? s.metrics.map((ref) => pick(ref) ?? ref) : all.filter((m) => m.output_type !== "pairwise");
  const missing = chosen.filter((m) => typeof m !== "object");
  const pairwise = chosen.filter((m) => typeof m === "object" && m.output_type === "pairwise");
  if (pairwise.length) throw couldNot(`${pairwise.map((m) => m.name).join(", ")}: a pairwise metric compares two replies and is judged by a comparison (POST /api/comparisons), not by this gate`);
  if (missing.length) throw couldNot(`no metric ${missing.map((m) => JSON.stringify(m)).join(", ")} in dataset ${datasetId} (it has: ${all.map((m) => m.name).join(", ") || "none"})`);
  if (chosen.length === 0) throw couldNot(`dataset ${datasetId} has no metrics to evaluate`);
  const mins = Object.entries(s.mins).map(([ref, value]) => {
    const m = pick(ref);
    if (!m) throw couldNot(`--min ${ref}: no such metric in dataset ${datasetId}`);
    return [m.id, value];
  });
  return { metrics: chosen, mins };
}

async function resolveBaseline(api, s, datasetId) {
  if (s.baseline === undefined || s.baseline === null || s.baseline === "") return undefined;
  if (s.baseline === "latest") {
    const res = await api("GET", `/evaluation-pipeline-executions?dataset_id=${datasetId}&limit=50`);
    if (res.status !== 200) throw failure("runs of the dataset", res);
    const found = res.json.find((e) => e.status === "completed" || e.status === "failed");
    if (!found) throw couldNot(`--baseline latest: dataset ${datasetId} has no finished run to compare with`);
    return found.id;
  }
  if (!/^\d+$/.test(String(s.baseline))) throw couldNot(`--baseline ${s.baseline}: an execution id or latest`);
  const res = await api("GET", `/evaluation-pipeline-executions/${s.baseline}`);
  if (res.status === 404) throw couldNot(`--baseline ${s.baseline}: no such execution`);
  if (res.status !== 200) throw failure(`baseline ${s.baseline}`, res);
  if (res.json.dataset_id !== datasetId) throw couldNot(`--baseline ${s.baseline} is a run of dataset ${res.json.dataset_id}, not ${datasetId}`);
  return res.json.id;
}

/** Send the source dataset to the target (a generation), wait for it to end; the generation. */
async function generate(api, s, sourceId) {
  const body = { source_dataset_id: sourceId, target_id: Number(s.target), mode: s.mode, repeats: s.repeats, ...(s.maxTurns !== undefined ? { max_turns: Number(s.maxTurns) } : {}) };
  const res = await api("POST", "/generations", body);
  if (res.status !== 202) throw failure("starting the generation", res);
  const id = res.json.id;
  log(`▸ generation ${id} (${s.mode} against target ${s.target}${s.repeats > 1 ? `, ${s.repeats} per conversation` : ""}): dataset ${res.json.dataset_id}`);
  const deadline = Date.now() + s.timeoutS * 1000;
  let last = "";
  for (;;) {
    const state = await api("GET", `/generations/${id}`);
    if (state.status !== 200) throw failure(`generation ${id}`, state);
    const g = state.json;
    const line = `  ${g.completed + g.failed}/${g.total} conversations, ${g.failed} cut short (${g.status})`;
    if (line !== last) log(line);
    last = line;
    if (!["pending", "processing"].includes(g.status)) {
      if (g.status !== "completed") throw couldNot(`generation ${id} ended ${g.status}: ${g.error ?? "see the generation"}`);
      if (g.completed === 0) throw couldNot(`generation ${id} made no conversation to the end: every one was cut short (${JSON.stringify(g.stop_reasons)})`);
      return g;
    }
    if (Date.now() > deadline) throw couldNot(`generation ${id} still ${g.status} after ${s.timeoutS} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The chosen metrics copied into the generated dataset (same names, so --min and the comparison by source match them). */
async function copyMetrics(api, metrics, datasetId) {
  const out = [];
  for (const m of metrics) {
    const body = { dataset_id: datasetId, name: m.name, description: m.description ?? null, evaluation_level: m.evaluation_level, kind: m.kind ?? "llm", model_name: m.model_name ?? null };
    if ((m.kind ?? "llm") === "check") Object.assign(body, { check: m.check, ...(m.applies_to ? { applies_to: m.applies_to } : {}) });
    else Object.assign(body, { prompt: m.prompt, output_type: m.output_type, ...(m.output_schema ? { output_schema: m.output_schema } : {}), ...(m.applies_to ? { applies_to: m.applies_to } : {}) });
    const res = await api("POST", "/evaluation-pipeline-nodes", body);
    if (res.status !== 201) throw failure(`copying metric ${m.name} to dataset ${datasetId}`, res);
    out.push(res.json);
  }
  return out;
}

async function runOnce(api, s, datasetId, metricIds, repeat) {
  const res = await api("POST", "/evaluation-pipeline-executions/run", {
    dataset_id: datasetId,
    pipeline_node_ids: metricIds,
    execution_mode: "async",
    batch_size: s.batchSize,
    // A repeat is judged afresh, not answered from the verdict cache.
    no_cache: repeat > 0,
  });
  if (res.status !== 202) throw failure("starting the run", res);
  const id = res.json.id;
  log(`▸ run ${id}${s.repeats > 1 ? ` (repeat ${repeat + 1} of ${s.repeats})` : ""}: ${s.url}/executions/${id}`);
  const deadline = Date.now() + s.timeoutS * 1000;
  let last = "";
  for (;;) {
    const state = await api("GET", `/evaluation-pipeline-executions/${id}`);
    if (state.status !== 200) throw failure(`run ${id}`, state);
    const e = state.json;
    const done = e.successful_evaluations + e.failed_evaluations + (e.skipped_evaluations ?? 0);
    const line = `  ${done}/${e.total_evaluations} cells, ${e.failed_evaluations} failed (${e.status})`;
    if (line !== last) log(line);
    last = line;
    if (["completed", "failed", "cancelled"].includes(e.status)) return e;
    if (Date.now() > deadline) throw couldNot(`run ${id} still ${e.status} after ${s.timeoutS} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const xml = (text) => String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");

function junit(report) {
  const suites = report.metrics.map((m) => {
    const cases = report.cases.filter((c) => c.pipeline_node_id === m.pipeline_node_id);
    const body = cases
      .map((c) => {
        const score = c.score === null ? "" : ` score ${c.score.toFixed(3)}`;
        const open = `    <testcase classname="turnscope.${xml(m.name)}" name="${xml(c.conversation)} (#${c.conversation_id})">`;
        if (c.verdict === "error") return `${open}\n      <error message="${xml(`could not evaluate: ${c.reason ?? ""}`.slice(0, 500))}">${xml(c.reason)}</error>\n    </testcase>`;
        if (c.verdict === "fail" || c.flipped) {
          const what = c.flipped ? `passed in the baseline, fails now${score}` : `failed${score}`;
          return `${open}\n      <failure message="${xml(what)}">${xml(c.reason)}</failure>\n    </testcase>`;
        }
        return `${open}</testcase>`;
      })
      .join("\n");
    const failures = cases.filter((c) => c.verdict === "fail" || (c.verdict === "pass" && c.flipped)).length;
    const errors = cases.filter((c) => c.verdict === "error").length;
    return `  <testsuite name="${xml(m.name)}" tests="${cases.length}" failures="${failures}" errors="${errors}">\n${body}\n  </testsuite>`;
  });
  const total = (k) => report.metrics.reduce((n, m) => n + k(m), 0);
  const failures = report.cases.filter((c) => c.verdict === "fail").length;
  const errors = report.cases.filter((c) => c.verdict === "error").length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="turnscope eval" tests="${total((m) => m.cases)}" failures="${failures}" errors="${errors}">\n${suites.join("\n")}\n</testsuites>\n`;
}

const fmt = (v, digits = 3) => (v === null || v === undefined ? "—" : Number(v).toFixed(digits));

function markdown(report, s) {
  const icon = { pass: "✅", fail: "❌", error: "⚠️" };
  const lines = [
    `### Turnscope eval ${icon[report.status]} ${report.status}`,
    "",
    `Dataset ${report.dataset.id} (${report.dataset.conversations} conversations, \`${report.dataset.hash.slice(0, 19)}…\`), run${report.runs.length > 1 ? "s" : ""} ${report.runs.map((r) => `[${r}](${s.url}/executions/${r})`).join(", ")}${report.baseline ? `, baseline [${report.baseline}](${s.url}/executions/${report.baseline})` : ""}.`,
    "",
    "| metric | baseline | now | delta (95% CI) | pass → fail | passed | gate |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const m of report.metrics) {
    const b = m.baseline;
    const delta = b?.delta ? `${b.delta.estimate >= 0 ? "+" : ""}${fmt(b.delta.estimate)} (${fmt(b.delta.interval[0])}, ${fmt(b.delta.interval[1])})` : "—";
    const gate = m.status === "pass" ? "✅" : m.status === "error" ? "⚠️ not evaluated" : `❌ ${[m.threshold && !m.threshold.holds ? `below ${m.threshold.mode === "mean" ? "mean" : "per-case"} minimum ${m.threshold.min}` : "", b?.why ?? ""].filter(Boolean).join("; ")}`;
    lines.push(`| ${m.name} | ${fmt(b?.mean)} | ${fmt(m.mean_score)} | ${delta} | ${b ? `${b.pass_to_fail} (McNemar p ${fmt(b.mcnemar_p)})` : "—"} | ${m.passed}/${m.cases} | ${gate} |`);
  }
  const g = report.generation;
  if (g) {
    lines.push("", `Generated by ${g.mode} against target ${g.target_id} from dataset ${g.source_dataset_id} (generation ${g.id}).`);
    if (g.by_source) {
      lines.push("", `**Against the source** (run ${g.by_source.baseline}, by source conversation):`, "", "| metric | source pass rate | now | pass → fail | fail → pass | mean delta | pass^k | pass@k |", "|---|---|---|---|---|---|---|---|");
      for (const m of g.by_source.metrics) lines.push(`| ${m.name} | ${fmt(m.a_pass_rate)} | ${fmt(m.b_pass_rate)} | ${m.worse} | ${m.better} | ${fmt(m.mean_delta)} | ${fmt(m.pass_hat_k)} | ${fmt(m.pass_at_k)} |`);
    }
  }
  const flipped = report.cases.filter((c) => c.flipped);
  if (flipped.length) {
    lines.push("", "**Passed in the baseline, fail now:**", "");
    for (const c of flipped.slice(0, 20)) lines.push(`- ${c.metric} · ${c.conversation} (#${c.conversation_id}): ${(c.reason ?? "").replace(/\s+/g, " ").slice(0, 200)}`);
    if (flipped.length > 20) lines.push(`- … and ${flipped.length - 20} more`);
  }
  return `${lines.join("\n")}\n`;
}

async function evaluate(argv) {
  const s = settings(argv);
  if (s.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const api = client(s);
  const me = await api("GET", "/me");
  if (me.status !== 200) throw failure("the server", me);
  const source = await resolveDataset(api, s);
  const chosen = await resolveMetrics(api, s, source.id);
  const baseline = await resolveBaseline(api, s, source.id);
  let dataset = source;
  let { metrics, mins } = chosen;
  let generation;
  if (s.target !== undefined) {
    // Generate first, then judge the generated dataset; the baseline (a run of the source) is compared by source conversation.
    generation = await generate(api, s, source.id);
    dataset = { id: generation.dataset_id };
    const copies = await copyMetrics(api, metrics, dataset.id);
    const byOld = new Map(metrics.map((m, i) => [m.id, copies[i].id]));
    metrics = copies;
    mins = mins.map(([id, v]) => [byOld.get(id), v]);
  }
  const runs = [];
  // With a target the repeats are generated conversations, each judged once.
  const judgings = generation ? 1 : s.repeats;
  for (let k = 0; k < judgings; k++) runs.push(await runOnce(api, s, dataset.id, metrics.map((m) => m.id), k));
  const cells = runs.reduce((n, e) => n + e.total_evaluations, 0);
  if (cells === 0) throw couldNot(`nothing was evaluated: dataset ${dataset.id} has no cells for ${metrics.map((m) => m.name).join(", ")}`);
  const failed = runs.reduce((n, e) => n + e.failed_evaluations, 0);
  if (failed === cells) throw couldNot(`every cell failed, nothing was evaluated: ${runs[0].errors?.[0]?.message ?? "see the run's page"}`);
  const query = new URLSearchParams({ runs: runs.map((r) => r.id).join(","), threshold: s.threshold });
  if (baseline && !generation) query.set("baseline", String(baseline));
  if (mins.length) query.set("min", mins.map(([id, v]) => `${id}:${v}`).join(","));
  const gate = await api("GET", `/evaluation-pipeline-executions/gate?${query}`);
  if (gate.status !== 200) throw failure("the gate", gate);
  const report = gate.json;
  let bySource;
  if (generation && baseline) {
    const compared = await api("GET", `/evaluation-pipeline-executions/compare?a=${baseline}&b=${runs[0].id}&pair_by=source`);
    if (compared.status !== 200) throw failure("the comparison with the source", compared);
    bySource = { baseline, run: runs[0].id, metrics: compared.json.metrics };
  }
  if (generation) report.generation = { id: generation.id, source_dataset_id: source.id, dataset_id: generation.dataset_id, mode: generation.mode, target_id: generation.target_id, stop_reasons: generation.stop_reasons, ...(bySource ? { by_source: bySource } : {}) };
  if (s.json) fs.writeFileSync(s.json, JSON.stringify({ ...report, url: s.url, executions: runs }, null, 2));
  if (s.junit) fs.writeFileSync(s.junit, junit(report));
  if (s.markdown) fs.writeFileSync(s.markdown, markdown(report, s));
  for (const m of report.metrics) {
    log(`${m.status === "pass" ? "✓" : "✗"} ${m.name}: ${m.passed}/${m.cases} passed${m.errors ? `, ${m.errors} not evaluated` : ""}, mean ${fmt(m.mean_score)}${m.baseline ? `; baseline mean ${fmt(m.baseline.mean)}, ${m.baseline.pass_to_fail} case(s) passed there and fail now` : ""}${m.baseline?.why ? ` — ${m.baseline.why}` : ""}`);
  }
  log(`${report.status === "pass" ? "✓ every gate holds" : report.status === "fail" ? "✗ a gate failed" : "✗ could not evaluate"} (dataset ${report.dataset.id}, ${report.dataset.hash})`);
  return report.status === "pass" ? 0 : report.status === "fail" ? 1 : 2;
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  if (command !== "eval") {
    process.stdout.write(HELP);
    return command === undefined || command === "--help" || command === "-h" ? 0 : 2;
  }
  return await evaluate(rest);
}

main().then(
  (code) => process.exit(code),
  (error) => {
    log(`✗ ${error instanceof Stop ? error.message : `could not evaluate: ${error.stack ?? error}`}`);
    process.exit(error instanceof Stop ? error.code : 2);
  },
);
