// `npm run demo`: Turnscope with something to look at, without a model. Starts, in one command:
//   - the judge TEST DOUBLE with verdicts scored from features of the text (lib/testing/judge-double/content.ts:
//     deterministic, not random, and not a model — every page's banner says so),
//   - the server (`npm start`: installs and builds if needed) on its own database, ./data/demo.db,
//   - and, the first time, a sample dataset (a support bot's 24 conversations) judged by two metrics,
//     labelled by a "demo-annotator", replayed against a small agent (the double again, as `support-bot-v2`)
//     and the replay judged and compared with the source,
// then prints where to look: a real distribution, a real comparison and a real agreement figure.
// Ctrl-C (or `kill <pid>`, even -9) stops everything: the double lives in this process, and the server
// stops when this process goes (scripts/start.mjs watches its parent).
import { spawn } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ensureDependencies, root } from "./project.mjs";

const port = Number(process.env.PORT ?? 3000);
const base = `http://localhost:${port}`;
const API = `${base}/api`;
const DATASET = "Demo · support bot v1";

ensureDependencies({ native: false });
const { tsImport } = await import(pathToFileURL(path.join(root, "node_modules", "tsx", "dist", "esm", "api", "index.mjs")).href);
const { startJudgeDouble } = await tsImport(pathToFileURL(path.join(root, "lib", "testing", "judge-double", "server.ts")).href, {
  parentURL: import.meta.url,
  tsconfig: path.join(root, "tsconfig.json"),
});
const double = await startJudgeDouble({ port: 0, defaultBehaviour: { kind: "content" } });
console.log(`▸ Judge test double (verdicts scored from features of the text — not a model) on ${double.baseURL}`);

// The demo's own store and settings: not the user's database, PostgreSQL or keys.
const env = { ...process.env, PORT: String(port), DATABASE_PATH: process.env.DEMO_DATABASE_PATH ?? path.join(root, "data", "demo.db"), OPENAI_BASE_URL: double.baseURL, OPENAI_API_KEY: "demo" };
for (const name of ["DATABASE_URL", "API_TOKEN", "JUDGE_MODEL", "JUDGE_PRICES"]) delete env[name];
const server = spawn(process.execPath, [path.join(root, "scripts", "start.mjs")], { cwd: root, stdio: "inherit", env });

let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  if (server.exitCode === null) {
    server.kill("SIGTERM");
    await new Promise((resolve) => server.once("exit", resolve));
  }
  await double.close();
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => void stop(0));
server.on("exit", (code) => {
  if (!stopping) {
    console.error(`✗ the server stopped (exit ${code})`);
    void stop(code ?? 1);
  }
});

// ---------------------------------------------------------------------------------------------------

async function call(method, url, body, headers = {}) {
  const res = await fetch(`${API}${url}`, {
    method,
    headers: body === undefined || body instanceof FormData ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status}: ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : null;
}

async function until(what, check, everyMs = 500) {
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (stopping) throw new Error(`stopped while waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const runDone = (id) => until(`run ${id}`, async () => {
  const run = await call("GET", `/evaluation-pipeline-executions/${id}`);
  return ["completed", "failed", "cancelled"].includes(run.status) ? run : undefined;
});

/** The support bot's conversations: requests detailed or vague, replies helpful, stalling or apologetic. */
function demoConversations() {
  const requests = [
    "I need a flight from Boston to Lisbon on 2026-12-14 for one person.",
    "Please refund order 48213, the jacket arrived torn.",
    "Can you move my booking TP218 to the 2026-12-16 flight?",
    "My card was charged twice, $89 each, for order 55120.",
    "help",
    "Where is my bag?",
    "Cancel my hotel reservation 7731 for next Friday, please.",
    "it doesn't work",
    "Change the name on ticket 0471 from Jon to John Smith.",
    "I want to upgrade seat 14C to business class on flight LH431.",
    "??",
    "Book a table for 4 at 19:30 tomorrow near the hotel.",
  ];
  const replies = [
    (r) => `I have booked and confirmed that for you: reference RF${(r.length * 97) % 9000 + 1000}. You can see it in your account.`,
    () => "I will look into it and come back to you.",
    () => "Sorry, I cannot do that from here. Please try again later.",
    (r) => `Done — here is your confirmation for "${r.slice(0, 30)}…": it is updated and sent to your email.`,
  ];
  const channels = ["web", "app", "email"];
  const out = [];
  for (let i = 0; i < 24; i++) {
    const request = requests[i % requests.length];
    const kind = (i * 7 + Math.floor(i / 12)) % replies.length;
    const reply = replies[kind](request);
    // The customer's own answer to "was it resolved?": mostly what happened, not always.
    const resolved = (kind === 0 || kind === 3) !== (i % 9 === 4);
    out.push({
      name: `${request.split(" ").slice(0, 5).join(" ")} (#${i + 1})`,
      meta: { channel: channels[i % 3], resolved, survey_score: resolved ? 4 + (i % 2) : 1 + (i % 3) },
      messages: [
        { role: "system", content: "You are the support assistant of a travel and retail company." },
        { role: "user", content: request },
        { role: "assistant", content: reply },
      ],
    });
  }
  return out;
}

async function seed() {
  const existing = (await call("GET", "/datasets?limit=500")).find((d) => d.name === DATASET);
  if (existing) {
    console.log(`▸ The demo's data is there already (dataset ${existing.id}); remove data/demo.db to start over.`);
    return links(existing.id);
  }
  console.log("▸ Importing the sample dataset, judging it, labelling it, replaying it against support-bot-v2…");
  const form = new FormData();
  form.append("file", new Blob([JSON.stringify({ conversations: demoConversations() })], { type: "application/json" }), "support-bot.json");
  form.append("name", DATASET);
  const imported = await call("POST", "/datasets/import", form);
  const datasetId = imported.dataset_id;
  await call("PATCH", `/datasets/${datasetId}`, { description: "Sample data of `npm run demo`, judged by the judge TEST DOUBLE: verdicts scored from features of the text, not by a model." });
  const templates = await call("GET", "/metric-templates?evaluation_level=conversation");
  const node = async (name) => {
    const template = templates.find((t) => t.name === name);
    return (await call("POST", "/evaluation-pipeline-nodes", { dataset_id: datasetId, template_id: template.id })).id;
  };
  const goal = await node("Goal Achievement");
  const task = await node("Task Completion");
  const runs = [];
  for (const nodeId of [goal, task]) {
    runs.push((await call("POST", "/evaluation-pipeline-executions/run", { dataset_id: datasetId, pipeline_node_id: nodeId, execution_mode: "async", batch_size: 16 })).id);
  }
  for (const id of runs) await runDone(id);
  // A person's verdicts on Task Completion: the customer's own "resolved".
  const conversations = await call("GET", `/datasets/${datasetId}/conversations?limit=500`);
  for (const c of conversations) {
    await call("POST", "/labels", { dataset_id: datasetId, pipeline_node_id: task, entity_type: "conversation", entity_id: c.id, value: c.meta.resolved === true }, { "x-user-id": "demo-annotator" });
  }
  // The next version of the agent: the double answering as an agent (a reply made from the user's message).
  const target = await call("POST", "/targets", { name: "support-bot-v2 (the test double as an agent)", kind: "openai_chat", url: double.baseURL, model: "support-bot-v2" });
  const generation = await call("POST", "/generations", { source_dataset_id: datasetId, target_id: target.id, mode: "replay", name: "Demo · support bot v2 (replayed)" });
  await until("the replay", async () => {
    const g = await call("GET", `/generations/${generation.id}`);
    return ["completed", "failed", "cancelled"].includes(g.status) ? g : undefined;
  });
  const evaluation = await call("POST", `/generations/${generation.id}/evaluate`, { pipeline_node_ids: [goal, task], execution_mode: "async", batch_size: 16 });
  for (const run of [evaluation.source_execution, evaluation.generated_execution]) await runDone(run.id);
  return links(datasetId, evaluation.compare_url);
}

async function links(datasetId, compareUrl) {
  const nodes = await call("GET", `/evaluation-pipeline-nodes?dataset_id=${datasetId}`);
  const task = nodes.find((n) => n.name === "Task Completion");
  const goal = nodes.find((n) => n.name === "Goal Achievement");
  const goalRun = goal ? (await call("GET", `/evaluation-pipeline-executions?dataset_id=${datasetId}&pipeline_node_id=${goal.id}&status=completed&limit=1`))[0] : undefined;
  let agreement = "";
  if (task) {
    const a = await call("GET", `/agreement?dataset_id=${datasetId}&pipeline_node_id=${task.id}&a=latest&b=labels`).catch(() => null);
    if (a) agreement = ` (accuracy ${a.accuracy?.toFixed(2)}, κ ${a.kappa?.toFixed(2)} over ${a.n})`;
  }
  return [
    ["The dataset (grid, verdicts, reasoning)", `${base}/datasets/${datasetId}`],
    ...(goalRun ? [["A run's distribution (Goal Achievement)", `${base}/executions/${goalRun.id}`]] : []),
    ...(compareUrl ? [["v1 against v2, paired by conversation", `${base}${compareUrl}`]] : [["Generations and their comparison", `${base}/datasets/${datasetId}/generate`]]),
    ...(task ? [[`Judge against the demo annotator${agreement}`, `${base}/datasets/${datasetId}/agreement?metric=${task.id}&a=latest&b=labels`]] : []),
  ];
}

try {
  await until("the server", async () => (await fetch(`${API}/health`)).ok, 1000);
  const pages = await seed();
  console.log("\n▸ Demo ready. THE JUDGE IS A TEST DOUBLE: its verdicts are scored from plain features of the text");
  console.log("  (\"booked\", \"refunded\", figures count for; \"sorry\", \"cannot\" against), deterministic — not a model.\n");
  for (const [what, url] of pages) console.log(`  ${what.padEnd(58)} ${url}`);
  console.log("\n  Ctrl-C stops the demo (the server and the double).");
} catch (error) {
  if (!stopping) {
    console.error(`✗ demo: ${error instanceof Error ? error.message : String(error)}`);
    await stop(1);
  }
}
