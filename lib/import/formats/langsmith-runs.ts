/**
 * LangSmith runs, as the LangSmith SDK hands them out and people save them: a run tree (a root run with its
 * `child_runs`, `read_run(…, load_child_runs=True)`), a list of runs (`list_runs`: flat, each naming its
 * `parent_run_id` and `trace_id`), or JSON Lines of one run per line. A run is `{id, name, run_type (chain,
 * llm, tool, retriever, prompt, parser, embedding), inputs, outputs, error, extra, tags, start_time, end_time,
 * trace_id, dotted_order, parent_run_id, child_runs, …}`. One conversation per trace, read from the richest
 * record of it the trace holds:
 *
 * 1. the root run's state, `outputs.messages` (a LangGraph agent returns the whole conversation there);
 * 2. else the last model call (`run_type: llm`): the messages it was sent, and the message it answered;
 * 3. else the root's `inputs` as the user's message and its `outputs` as the answer.
 *
 * Messages may be LangChain's serialised form (`{lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs}`),
 * its dict form (`{type: "ai", content | data}`) or OpenAI's (`{role, content}`); an AI message's `tool_calls`
 * (`{name, args, id}`) are calls, a tool message's `tool_call_id` pairs its result. The trace's runs (name,
 * type, error, metadata, each model call's usage) are kept in the conversation's meta.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";
import { convertMessages } from "./turns";

type Rec = Record<string, unknown>;
type Unit = { value: unknown; path: string; line?: number };

const str = (v: unknown): v is string => typeof v === "string";
const runTypes = new Set(["chain", "llm", "tool", "retriever", "prompt", "parser", "embedding"]);

/** A LangSmith run: a known `run_type` and its inputs or outputs. */
const isRun = (v: unknown): v is Rec => isRecord(v) && str(v.run_type) && runTypes.has(v.run_type) && ("inputs" in v || "outputs" in v);

// ── Messages ──────────────────────────────────────────────────────────────────────────────────────

const lcRoles: Record<string, string> = { human: "user", ai: "assistant", system: "system", tool: "tool", function: "tool", developer: "system" };

/** The role of a LangChain message class (`HumanMessage`, `AIMessageChunk`, …) or dict type (`human`, `ai`, …). */
function lcRole(kind: string): string | undefined {
  const base = kind.replace(/MessageChunk$|Message$/, "").toLowerCase();
  return lcRoles[base];
}

/** One message in any of the three forms, as a chat message turns.ts reads; undefined when it is none. */
function readMessage(m: unknown): Rec | undefined {
  if (!isRecord(m)) return undefined;
  let role: string | undefined;
  let fields: Rec;
  if (m.lc === 1 && m.type === "constructor" && Array.isArray(m.id) && isRecord(m.kwargs)) {
    const cls = String(m.id.at(-1));
    fields = m.kwargs;
    role = cls === "ChatMessage" || cls === "ChatMessageChunk" ? (str(fields.role) ? fields.role : undefined) : lcRole(cls);
  } else if (str(m.type) && lcRole(m.type) && !("role" in m)) {
    fields = isRecord(m.data) ? m.data : m;
    role = lcRole(m.type);
  } else if (str(m.role) && ("content" in m || "tool_calls" in m)) {
    return m.role === "developer" ? { ...m, role: "system" } : m;
  } else return undefined;
  if (!role) return undefined;
  const out: Rec = { role, content: fields.content ?? null };
  const meta: Rec = {};
  const calls = Array.isArray(fields.tool_calls) ? fields.tool_calls.filter(isRecord) : [];
  if (calls.length) {
    out.tool_calls = calls.map((c) => ({ id: c.id, function: { name: c.name, arguments: c.args ?? {} } }));
    // Anthropic's content holds the same calls as tool_use parts: read once, from tool_calls.
    if (Array.isArray(out.content)) out.content = out.content.filter((p) => !(isRecord(p) && p.type === "tool_use"));
  }
  if (role === "tool" && fields.tool_call_id !== undefined) out.tool_call_id = fields.tool_call_id;
  if (str(fields.name)) out.name = fields.name;
  for (const key of ["usage_metadata", "response_metadata", "additional_kwargs", "artifact"] as const) {
    const v = fields[key];
    if (v !== undefined && v !== null && !(isRecord(v) && Object.keys(v).length === 0)) meta[key] = v;
  }
  if (Object.keys(meta).length) out.meta = meta;
  return out;
}

/** A list of messages, all readable (a batch `[[…]]` is its first list); undefined when it is not one. */
function messageList(value: unknown): Rec[] | undefined {
  const list = Array.isArray(value) && value.length === 1 && Array.isArray(value[0]) ? value[0] : value;
  if (!Array.isArray(list) || !list.length) return undefined;
  const read = list.map(readMessage);
  return read.every((m): m is Rec => m !== undefined) ? read : undefined;
}

/** A run's inputs or outputs as one text: its one text field, or the whole value as JSON. */
function textOfValue(value: unknown): string {
  if (str(value)) return value;
  if (isRecord(value)) {
    const texts = Object.values(value).filter(str);
    if (texts.length === 1 && Object.keys(value).length === 1) return texts[0];
  }
  return value === undefined || value === null ? "" : JSON.stringify(value);
}

/** What a model call was sent: `messages` (one list, or a batch of one), or its `prompts`. */
function llmInputs(run: Rec): Rec[] | undefined {
  const inputs = isRecord(run.inputs) ? run.inputs : {};
  const messages = messageList(inputs.messages);
  if (messages) return messages;
  if (Array.isArray(inputs.prompts) && str(inputs.prompts[0])) return [{ role: "user", content: inputs.prompts[0] }];
  return undefined;
}

/** What a model call answered: a generation's message (or text), OpenAI's first choice, or an output message. */
function llmOutput(run: Rec): Rec | undefined {
  const outputs = isRecord(run.outputs) ? run.outputs : undefined;
  if (!outputs) return undefined;
  let answer: Rec | undefined;
  const generation = Array.isArray(outputs.generations) ? (Array.isArray(outputs.generations[0]) ? outputs.generations[0][0] : outputs.generations[0]) : undefined;
  if (isRecord(generation)) {
    answer = readMessage(generation.message) ?? (str(generation.text) ? { role: "assistant", content: generation.text } : undefined);
    if (answer && isRecord(generation.generation_info)) answer.meta = { ...(answer.meta as Rec | undefined), generation_info: generation.generation_info };
  } else if (Array.isArray(outputs.choices) && isRecord(outputs.choices[0])) answer = readMessage(outputs.choices[0].message);
  else answer = readMessage(outputs.output) ?? readMessage(outputs);
  if (answer && isRecord(outputs.llm_output)) answer.meta = { ...(answer.meta as Rec | undefined), llm_output: outputs.llm_output };
  return answer;
}

/** A model call's token usage: its answer's `usage_metadata`, or the call's `llm_output.token_usage`. */
function usageOf(run: Rec): unknown {
  const answer = llmOutput(run);
  const meta = isRecord(answer?.meta) ? answer.meta : {};
  if (meta.usage_metadata) return meta.usage_metadata;
  return isRecord(meta.llm_output) ? meta.llm_output.token_usage : undefined;
}

// ── Traces ────────────────────────────────────────────────────────────────────────────────────────

/** Every run of a tree, the root first. */
function flatten(run: Rec, out: Rec[] = []): Rec[] {
  out.push(run);
  for (const child of Array.isArray(run.child_runs) ? run.child_runs : []) if (isRun(child)) flatten(child, out);
  return out;
}

/** The upload's runs grouped by trace, each trace's root first and the rest in the order they ran. */
function tracesOf(runs: Rec[]): Rec[][] {
  const all = runs.flatMap((r) => flatten(r));
  const byId = new Map(all.filter((r) => r.id !== undefined).map((r) => [String(r.id), r]));
  // Each run's root, found once per run (a long chain of parents is walked once, not once per run; a cycle stops).
  const roots = new Map<Rec, Rec>();
  const rootOf = (run: Rec): Rec => {
    const path: Rec[] = [];
    const seen = new Set<Rec>();
    let at = run;
    while (!roots.has(at) && !seen.has(at) && at.parent_run_id !== undefined && at.parent_run_id !== null && byId.has(String(at.parent_run_id))) {
      seen.add(at);
      path.push(at);
      at = byId.get(String(at.parent_run_id))!;
    }
    const root = roots.get(at) ?? at;
    for (const r of [...path, at]) roots.set(r, root);
    return root;
  };
  const traces = new Map<Rec, Rec[]>();
  for (const run of all) {
    const root = rootOf(run);
    if (!traces.has(root)) traces.set(root, []);
    if (run !== root) traces.get(root)!.push(run);
  }
  const order = (r: Rec) => (str(r.dotted_order) ? r.dotted_order : str(r.start_time) ? r.start_time : "");
  return [...traces].map(([root, rest]) => [root, ...rest.map((r, i) => ({ r, i })).sort((a, b) => (order(a.r) < order(b.r) ? -1 : order(a.r) > order(b.r) ? 1 : a.i - b.i)).map((x) => x.r)]);
}

/** The runs a unit holds: a run (tree), a list of runs, or a record holding the list under `runs` (an API page). */
function runsOf(value: unknown): Rec[] | undefined {
  if (isRun(value)) return [value];
  if (Array.isArray(value) && value.length && value.every(isRun)) return value;
  if (isRecord(value) && Array.isArray(value.runs) && value.runs.length && value.runs.every(isRun)) return value.runs;
  return undefined;
}

/** Whether the upload is LangSmith runs: every unit a run or a list of runs. */
export function isLangsmithRuns(units: Unit[]): boolean {
  return units.length > 0 && units.every((u) => runsOf(u.value) !== undefined);
}

function readTrace(trace: Rec[]): { messages: Rec[]; readFrom: string } {
  const [root] = trace;
  const state = isRecord(root.outputs) ? messageList(root.outputs.messages) : undefined;
  if (state) return { messages: state, readFrom: "the root run's outputs.messages" };
  const calls = trace.filter((r) => r.run_type === "llm");
  for (const call of calls.reverse()) {
    const sent = llmInputs(call);
    if (!sent) continue;
    const answer = llmOutput(call);
    return { messages: answer ? [...sent, answer] : sent, readFrom: "the last model call's messages and answer" };
  }
  const messages: Rec[] = [{ role: "user", content: textOfValue(root.inputs) }];
  const answer = textOfValue(root.outputs);
  if (answer) messages.push({ role: "assistant", content: answer });
  return { messages, readFrom: "the root run's inputs and outputs" };
}

/** Convert LangSmith runs: one conversation per trace. */
export function convertLangsmithRuns(units: Unit[]): Normalised {
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  const readFrom: Record<string, number> = {};
  let total = 0;
  for (const unit of units) {
    for (const trace of tracesOf(runsOf(unit.value)!)) {
      total += trace.length;
      const [root] = trace;
      const read = readTrace(trace);
      readFrom[read.readFrom] = (readFrom[read.readFrom] ?? 0) + 1;
      const converted = convertMessages(read.messages);
      const meta: Rec = {};
      for (const key of ["trace_id", "tags", "error", "start_time", "end_time", "status", "total_tokens", "prompt_tokens", "completion_tokens", "total_cost", "feedback_stats"] as const) {
        const v = root[key];
        if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) meta[key] = v;
      }
      if (isRecord(root.extra)) for (const key of ["metadata", "runtime"] as const) if (isRecord(root.extra[key])) meta[key] = root.extra[key];
      // Every run of the trace, by name and type (its error and metadata too): the conversation is one reading of them.
      meta.runs = trace.map((r) => {
        const usage = r.run_type === "llm" ? usageOf(r) : undefined;
        return {
          name: r.name,
          run_type: r.run_type,
          ...(usage ? { usage } : {}),
          ...(r.error ? { error: r.error } : {}),
          ...(Array.isArray(r.tags) && r.tags.length ? { tags: r.tags } : {}),
          ...(r !== root && isRecord(r.extra) && isRecord(r.extra.metadata) ? { metadata: r.extra.metadata } : {}),
        };
      });
      conversations.push({ name: str(root.name) ? root.name : undefined, meta, messages: converted.messages });
      sources.push({ path: unit.path, messagesPath: unit.path, line: unit.line, rawMessages: trace.map((r) => ({ ...r, child_runs: undefined })), wholeConversation: true });
    }
  }
  return {
    format: "langsmith_runs",
    data: { conversations },
    sources,
    // Identifiers, times and order of the runs; `serialized` is each component's class and settings, `events` its
    // start and end (and streamed tokens, which its output holds), not what was said.
    structural: ["lc", "dotted_order", "trace_id", "parent_run_id", "session_id", "run_type", "start_time", "end_time", "child_run_ids", "reference_example_id", "execution_order", "child_execution_order", "status", "serialized", "events", "time"],
    records: {
      inFile: total,
      unit: `runs in ${conversations.length} trace${conversations.length === 1 ? "" : "s"}`,
      skipped: {},
      reasons: [
        `each trace is one conversation, read from ${Object.entries(readFrom)
          .map(([from, n]) => `${from} (${n})`)
          .join(", ")}; the model calls before the last one sent the same conversation up to their turn`,
      ],
    },
  };
}
