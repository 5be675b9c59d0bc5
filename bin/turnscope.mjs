#!/usr/bin/env node
// `npx turnscope eval`: a CI gate that is a thin client of a running Turnscope server's REST API.
// Exit status: 0 every gate holds; 1 a threshold or a regression failed; 2 it could not evaluate
// (refused credential, unreachable server or judge, nothing evaluated, a baseline that does not exist,
// anything it cannot understand, no answer within --timeout). It never prints a secret, and a file its
// config names must lie inside the working directory (docs/ci.md, "The exit contract on every input").
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
  --timeout <seconds>      the longest the whole command may take: every request, the upload and the
                           waits for the generation and the runs (default 3600)
  --junit <file>           JUnit XML: one test case per conversation × metric
  --json <file>            the gate's report and the runs, as JSON
  --markdown <file>        a table for a pull-request comment
  --config <file>          a JSON file with the same settings (dataset, metrics, baseline, min: {name: value}, …);
                           the files it names (dataset, reports) must lie inside the working directory

Anything it cannot understand (an unknown option, a value it cannot read) exits 2 with the reason. A URL
holding a user, password or query string is refused: the key goes in --key or TURNSCOPE_API_KEY.
`;

class Stop extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}
const couldNot = (message) => new Stop(2, message);

// Secrets this run knows (the key, and anything a URL would carry): never written to stderr or a report,
// whatever a server's error message echoes back.
const secrets = new Set();
const redact = (text) => {
  let out = String(text);
  for (const secret of secrets) if (secret.length >= 3) out = out.split(secret).join("***");
  return out;
};
const log = (line) => process.stderr.write(`${redact(line)}\n`);

/** Every option: `value` takes one, `list` may be repeated, `switch` takes none. */
const OPTIONS = {
  url: "value", key: "value", dataset: "value", metric: "list", baseline: "value", min: "list", threshold: "value",
  repeats: "value", target: "value", mode: "value", "max-turns": "value", "batch-size": "value", timeout: "value",
  junit: "value", json: "value", markdown: "value", config: "value", help: "switch",
};
/** The keys a config file may hold. */
const CONFIG_KEYS = ["url", "key", "dataset", "metrics", "baseline", "min", "threshold", "repeats", "batch_size", "timeout", "junit", "json", "markdown", "target", "mode", "max_turns"];

function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j];
      row[j] = next;
    }
  }
  return row[b.length];
}
const didYouMean = (name, known, prefix) => {
  const near = known.map((k) => [k, distance(name, k)]).filter(([, d]) => d <= 2).sort((x, y) => x[1] - y[1])[0];
  return near ? ` (did you mean ${prefix}${near[0]}?)` : "";
};

function parseArgs(argv) {
  const out = { metric: [], min: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help") {
      out.help = true;
      continue;
    }
    // A value is never echoed: a mistyped `--kye sk-…` must not print the key.
    if (!arg.startsWith("--")) throw couldNot(`unexpected argument #${i + 1} (not an option; options start with --, see --help)`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    const kind = OPTIONS[name];
    if (!kind) throw couldNot(`unknown option --${name}${didYouMean(name, Object.keys(OPTIONS), "--")}; see --help`);
    if (kind === "switch") {
      if (inline !== undefined) throw couldNot(`--${name} takes no value`);
      out[name] = true;
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined || (value.startsWith("--") && OPTIONS[value.slice(2).split("=")[0]])) throw couldNot(`--${name} needs a value`);
    }
    if (name === "key") secrets.add(value);
    const key = name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (kind === "list") out[key].push(value);
    else out[key] = value;
  }
  return out;
}

/** The server's address: http(s), no user or password, no query or fragment (a key goes in --key). */
function serverUrl(raw, from) {
  let u;
  try {
    u = new URL(String(raw));
  } catch {
    throw couldNot(`${from} is not a URL (write http://host:port)`);
  }
  if (u.username || u.password) {
    for (const part of [u.password, u.username].filter(Boolean)) {
      secrets.add(part);
      secrets.add(decodeURIComponent(part));
    }
    throw couldNot(`${from} holds a user or password (${u.protocol}//***@${u.host}): give the server's key with --key or TURNSCOPE_API_KEY instead`);
  }
  if (u.search || u.hash) {
    for (const [, v] of u.searchParams) if (v) secrets.add(v);
    if (u.hash.length > 1) secrets.add(u.hash.slice(1));
    throw couldNot(`${from} takes no query string or fragment (${u.protocol}//${u.host}${u.pathname}?***): give the server's key with --key or TURNSCOPE_API_KEY`);
  }
  if (!["http:", "https:"].includes(u.protocol)) throw couldNot(`${from} must be an http:// or https:// URL`);
  return `${u.origin}${u.pathname}`.replace(/\/+$/, "");
}

function number(value, what, { integer = false, min, max }) {
  const text = String(value).trim();
  const n = text === "" ? NaN : Number(text);
  const ok = Number.isFinite(n) && (!integer || Number.isInteger(n)) && n >= min && (max === undefined || n <= max);
  if (!ok) throw couldNot(`${what} must be ${integer ? "an integer" : "a number"} ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}${typeof value === "string" && value.length <= 40 ? ` (got ${JSON.stringify(value)})` : ""}`);
  return n;
}

/**
 * A path a config file names (the dataset to upload, a report to write) must lie inside the working
 * directory, symlinks resolved: a pull request that edits the config must not make CI upload, or
 * overwrite, another file of the runner.
 */
function insideWorkingDirectory(file, what) {
  const cwd = fs.realpathSync(process.cwd());
  let real;
  try {
    real = fs.realpathSync(file);
  } catch {
    // Not there (yet): its folder, resolved, and its name.
    let dir = path.dirname(file);
    const rest = [path.basename(file)];
    for (;;) {
      try {
        real = path.join(fs.realpathSync(dir), ...rest);
        break;
      } catch {
        if (path.dirname(dir) === dir) {
          real = path.resolve(file);
          break;
        }
        rest.unshift(path.basename(dir));
        dir = path.dirname(dir);
      }
    }
  }
  const rel = path.relative(cwd, real);
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) {
    throw couldNot(`${what} ${file} is outside the working directory ${cwd}${real !== path.resolve(file) ? ` (it resolves to ${real})` : ""}: a config file may only name files inside it`);
  }
  return real;
}

function readConfig(configPath) {
  let file;
  try {
    file = JSON.parse(fs.readFileSync(configPath, "utf8"));
  } catch (error) {
    throw couldNot(`cannot read the config ${configPath}: ${error.message}`);
  }
  if (typeof file !== "object" || file === null || Array.isArray(file)) throw couldNot(`the config ${configPath} must be a JSON object`);
  for (const k of Object.keys(file)) {
    if (!CONFIG_KEYS.includes(k)) throw couldNot(`the config ${configPath} has an unknown key ${JSON.stringify(k)}${didYouMean(k, CONFIG_KEYS, "")}`);
  }
  if (typeof file.key === "string") secrets.add(file.key);
  const text = (k) => {
    if (file[k] !== undefined && file[k] !== null && typeof file[k] !== "string" && typeof file[k] !== "number") throw couldNot(`the config's ${k} must be a string or a number`);
  };
  for (const k of ["url", "key", "dataset", "baseline", "threshold", "repeats", "batch_size", "timeout", "junit", "json", "markdown", "target", "mode", "max_turns"]) text(k);
  if (file.metrics !== undefined && (!Array.isArray(file.metrics) || file.metrics.some((m) => typeof m !== "string" && typeof m !== "number"))) {
    throw couldNot("the config's metrics must be a list of metric names or ids");
  }
  if (file.min !== undefined && (typeof file.min !== "object" || file.min === null || Array.isArray(file.min) || Object.values(file.min).some((v) => typeof v !== "number" || !Number.isFinite(v)))) {
    throw couldNot('the config\'s min must be an object of numbers, e.g. {"Goal Achievement": 0.7}');
  }
  return file;
}

function settings(argv) {
  const flags = parseArgs(argv);
  if (flags.help) return { help: true };
  const configPath = flags.config ?? (fs.existsSync("turnscope.eval.json") ? "turnscope.eval.json" : undefined);
  const file = configPath ? readConfig(configPath) : {};
  if (process.env.TURNSCOPE_API_KEY) secrets.add(process.env.TURNSCOPE_API_KEY);
  const mins = { ...(file.min ?? {}) };
  for (const pair of flags.min) {
    const [metric, value] = pair.split(/=(?=[^=]*$)/);
    if (!metric || value === undefined || value.trim() === "" || !Number.isFinite(Number(value))) throw couldNot(`--min ${pair}: write <metric>=<number>`);
    mins[metric] = Number(value);
  }
  const configDir = configPath ? path.dirname(configPath) : ".";
  /** A file the config names: resolved from the config's folder, and held inside the working directory. */
  const fromConfig = (flag, key, what) => {
    if (flag !== undefined) return flag;
    if (file[key] === undefined || file[key] === null) return undefined;
    return insideWorkingDirectory(path.resolve(configDir, String(file[key])), `the config's ${what}`);
  };
  const urlFrom = flags.url !== undefined ? "--url" : file.url !== undefined ? "the config's url" : process.env.TURNSCOPE_URL ? "TURNSCOPE_URL" : "the default url";
  const s = {
    url: serverUrl(flags.url ?? file.url ?? process.env.TURNSCOPE_URL ?? "http://localhost:3000", urlFrom),
    key: flags.key ?? (file.key === undefined ? undefined : String(file.key)) ?? process.env.TURNSCOPE_API_KEY,
    dataset: flags.dataset ?? file.dataset,
    datasetFromConfig: flags.dataset === undefined && file.dataset !== undefined,
    metrics: flags.metric.length ? flags.metric : (file.metrics ?? []).map(String),
    baseline: flags.baseline ?? file.baseline,
    mins,
    threshold: flags.threshold ?? file.threshold ?? "case",
    repeats: number(flags.repeats ?? file.repeats ?? 1, "--repeats", { integer: true, min: 1, max: 10 }),
    batchSize: number(flags.batchSize ?? file.batch_size ?? 16, "--batch-size", { integer: true, min: 1, max: 256 }),
    timeoutS: number(flags.timeout ?? file.timeout ?? 3600, "--timeout (seconds)", { min: 0.001, max: 604800 }),
    junit: fromConfig(flags.junit, "junit", "junit report"),
    json: fromConfig(flags.json, "json", "json report"),
    markdown: fromConfig(flags.markdown, "markdown", "markdown report"),
    target: flags.target ?? file.target,
    mode: flags.mode ?? file.mode ?? "replay",
    maxTurns: (flags.maxTurns ?? file.max_turns) === undefined ? undefined : number(flags.maxTurns ?? file.max_turns, "--max-turns", { integer: true, min: 1, max: 50 }),
    configDir,
  };
  if (s.dataset === undefined || s.dataset === null || String(s.dataset).trim() === "") throw couldNot("--dataset is required (an id, or a file to import)");
  if (s.datasetFromConfig && !/^\d+$/.test(String(s.dataset))) insideWorkingDirectory(path.resolve(configDir, String(s.dataset)), "the config's dataset");
  if (!["case", "mean"].includes(s.threshold)) throw couldNot("--threshold must be case or mean");
  if (s.target !== undefined && !/^\d+$/.test(String(s.target))) throw couldNot(`--target ${s.target}: a target id`);
  if (s.target !== undefined && !["next_turn", "replay", "simulate"].includes(s.mode)) throw couldNot("--mode must be next_turn, replay or simulate");
  if (s.target === undefined && (flags.mode ?? file.mode) !== undefined) throw couldNot("--mode goes with --target");
  if (s.target === undefined && s.maxTurns !== undefined) throw couldNot("--max-turns goes with --target and --mode simulate");
  if (s.baseline !== undefined && s.baseline !== null && s.baseline !== "" && s.baseline !== "latest" && !/^\d+$/.test(String(s.baseline))) {
    throw couldNot(`--baseline ${s.baseline}: an execution id or latest`);
  }
  s.deadline = Date.now() + s.timeoutS * 1000;
  return s;
}

const seconds = (s) => `--timeout ${s.timeoutS} s`;

/**
 * Requests to the server, each bounded by what is left of --timeout (its own timer, the body read
 * included): a server that accepts and never answers ends the command with exit 2, not a hang.
 */
function client(s) {
  const headers = s.key ? { authorization: `Bearer ${s.key}` } : {};
  return async (method, urlPath, body) => {
    const what = `${method} /api${urlPath.split("?")[0]}`;
    const left = s.deadline - Date.now();
    if (left <= 0) throw couldNot(`out of time (${seconds(s)}) before ${what}`);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), left);
    let res;
    let text;
    try {
      try {
        res = await fetch(`${s.url}/api${urlPath}`, {
          method,
          headers: { ...headers, ...(body !== undefined && !(body instanceof FormData) ? { "content-type": "application/json" } : {}) },
          body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
          signal: controller.signal,
          redirect: "error",
        });
        text = await res.text();
      } catch (error) {
        if (controller.signal.aborted) throw couldNot(`no answer from ${s.url} within ${seconds(s)} (${what})`);
        throw couldNot(`cannot reach ${s.url}: ${error.cause?.message ?? error.message}`);
      }
    } finally {
      clearTimeout(timer);
    }
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

/** Wait between polls, never past the deadline. */
const pause = (s) => new Promise((r) => setTimeout(r, Math.max(0, Math.min(500, s.deadline - Date.now()))));

const failure = (what, res) => couldNot(`${what}: ${res.status} ${res.json?.error?.message ?? JSON.stringify(res.json ?? "").slice(0, 300)}`);

async function resolveDataset(api, s) {
  if (/^\d+$/.test(String(s.dataset))) {
    const res = await api("GET", `/datasets/${s.dataset}`);
    if (res.status !== 200) throw failure(`dataset ${s.dataset}`, res);
    return res.json;
  }
  const file = s.datasetFromConfig ? insideWorkingDirectory(path.resolve(s.configDir, String(s.dataset)), "the config's dataset") : path.resolve(s.configDir, String(s.dataset));
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw couldNot(`--dataset ${s.dataset}: no such dataset id or file`);
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
    if (Date.now() >= s.deadline) throw couldNot(`generation ${id} still ${g.status} at ${seconds(s)}`);
    await pause(s);
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
    // History and the run page say the CI gate made it.
    trigger: "gate",
  });
  if (res.status !== 202) throw failure("starting the run", res);
  const id = res.json.id;
  log(`▸ run ${id}${s.repeats > 1 ? ` (repeat ${repeat + 1} of ${s.repeats})` : ""}: ${s.url}/executions/${id}`);
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
    if (Date.now() >= s.deadline) throw couldNot(`run ${id} still ${e.status} at ${seconds(s)}`);
    await pause(s);
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
  // With --target the baseline is a run of the source, compared by source conversation (not by the gate).
  const baseline = report.baseline ?? report.generation?.by_source?.baseline;
  const lines = [
    `### Turnscope eval ${icon[report.status]} ${report.status}`,
    "",
    `Dataset ${report.dataset.id} (${report.dataset.conversations} conversations, \`${report.dataset.hash.slice(0, 19)}…\`), run${report.runs.length > 1 ? "s" : ""} ${report.runs.map((r) => `[${r}](${s.url}/executions/${r})`).join(", ")}${baseline ? `, baseline [${baseline}](${s.url}/executions/${baseline})${report.baseline ? "" : " (a run of the source, compared by source conversation below)"}` : ""}.`,
    "",
    // Each column means one thing: means are means, pass rates are pass rates (the table against the source says so too).
    "| metric | baseline mean | mean now | mean delta (95% CI) | pass → fail | passed now | gate |",
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
      lines.push(
        "",
        `**Against the source** (baseline run ${g.by_source.baseline}, by source conversation):`,
        "",
        "| metric | pass rate in the source | pass rate now | pass → fail | fail → pass | mean delta | pass^k | pass@k |",
        "|---|---|---|---|---|---|---|---|",
      );
      for (const m of g.by_source.metrics) lines.push(`| ${m.name} | ${fmt(m.a_pass_rate)} | ${fmt(m.b_pass_rate)} | ${m.worse} | ${m.better} | ${fmt(m.mean_delta)} | ${fmt(m.pass_hat_k)} | ${fmt(m.pass_at_k)} |`);
    }
  }
  // The cases that passed in the baseline and fail now (docs/ci.md): the gate's flips, or with --target the
  // source conversations whose generated reply fails where the source passed, named as the report names them.
  const flipped = report.cases.filter((c) => c.flipped).map((c) => ({ metric: c.metric, conversation: c.conversation, id: c.conversation_id, reason: c.reason }));
  const byId = new Map(report.cases.map((c) => [`${c.metric}:${c.conversation_id}`, c]));
  for (const cell of g?.by_source?.cells ?? []) {
    if (!cell.flip || !cell.a?.pass) continue;
    const failing = (cell.b ?? []).find((b) => b.pass === false);
    const c = failing ? byId.get(`${cell.metric}:${failing.conversation_id}`) : undefined;
    flipped.push({ metric: cell.metric, conversation: c?.conversation ?? `source conversation ${cell.source_conversation_id}`, id: failing?.conversation_id ?? cell.source_conversation_id, reason: c?.reason ?? null });
  }
  if (flipped.length) {
    lines.push("", "**Passed in the baseline, fail now:**", "");
    for (const c of flipped.slice(0, 20)) lines.push(`- ${c.metric} · ${c.conversation} (#${c.id}): ${(c.reason ?? "").replace(/\s+/g, " ").slice(0, 200)}`);
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
  // The last guard of --timeout: whatever is still pending then, the command ends with exit 2.
  setTimeout(() => {
    log(`✗ could not evaluate: still not done at ${seconds(s)}`);
    process.exit(2);
  }, Math.max(0, s.deadline - Date.now()) + 2000).unref();
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
    bySource = { baseline, run: runs[0].id, metrics: compared.json.metrics, cells: compared.json.cells };
  }
  if (generation) report.generation = { id: generation.id, source_dataset_id: source.id, dataset_id: generation.dataset_id, mode: generation.mode, target_id: generation.target_id, stop_reasons: generation.stop_reasons, ...(bySource ? { by_source: bySource } : {}) };
  if (s.json) fs.writeFileSync(s.json, redact(JSON.stringify({ ...report, url: s.url, executions: runs }, null, 2)));
  if (s.junit) fs.writeFileSync(s.junit, redact(junit(report)));
  if (s.markdown) fs.writeFileSync(s.markdown, redact(markdown(report, s)));
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
    log(`✗ ${error instanceof Stop ? error.message : `could not evaluate: ${error?.stack ?? error}`}`);
    process.exit(error instanceof Stop ? error.code : 2);
  },
);
