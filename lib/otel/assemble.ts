/**
 * A conversation's spans → one Turnscope conversation (pure). Every model call carries the whole
 * history so far, so the conversation is that history once: the calls are read in start order and
 * each one's input and output are merged into one transcript, keeping only what extends it. Tool
 * calls, tool results and reasoning become steps of the assistant turn, folded as the file import folds
 * them (lib/import/formats/turns.ts); model, agent, tokens and latency go to message meta, the
 * resource's service name, version and environment to conversation meta.
 */
import type { Conversation, Message, Step } from "@/lib/conversation";
import { parseMaybeJson, readAiSdkOutput, readEvents, readMessages, readSystemInstructions, type Msg, type Part } from "./messages";
import type { Attributes, AttrValue, OtelSpan } from "./types";

/** What produced an assistant message: the model call's span and its figures. */
export type CallInfo = {
  traceId: string;
  spanId: string;
  startNs: string;
  model?: string;
  agent?: string;
  inputTokens?: number;
  outputTokens?: number;
  latencyMs: number;
  finishReason?: string;
};

type TranscriptMsg = Msg & { origin?: CallInfo };

/** The one conversation shape (lib/conversation.ts), with the meta and agents assembly always writes as objects and lists. */
export type AssembledStep = Step;
export type AssembledMessage = Message & { meta: Record<string, unknown> | null };
export type AssembledConversation = Conversation & { meta: Record<string, unknown>; agents: unknown[] | null; messages: AssembledMessage[] };

const num = (v: AttrValue | undefined): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : undefined);
const text = (v: AttrValue | undefined): string | undefined => (typeof v === "string" && v ? v : undefined);

type Timed = Pick<OtelSpan, "startNs" | "endNs" | "spanId">;
const byStart = (a: Timed, b: Timed) =>
  a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : a.endNs < b.endNs ? -1 : a.endNs > b.endNs ? 1 : a.spanId < b.spanId ? -1 : 1;

const durationMs = (s: OtelSpan) => Math.max(0, Number((BigInt(s.endNs) - BigInt(s.startNs)) / BigInt(1000)) / 1000);

/** A span time as ISO 8601; undefined for an unset (zero) time. */
const nsToIso = (ns: string): string | undefined => (/^0+$/.test(ns) ? undefined : new Date(Number(BigInt(ns) / BigInt(1_000_000))).toISOString());

function operationOf(span: OtelSpan): string | undefined {
  return text(span.attributes["gen_ai.operation.name"]);
}

function isToolSpan(span: OtelSpan): boolean {
  return operationOf(span) === "execute_tool" || span.name === "ai.toolCall" || span.name.startsWith("execute_tool");
}

function isAgentSpan(span: OtelSpan): boolean {
  return operationOf(span) === "invoke_agent" || operationOf(span) === "create_agent" || span.name.startsWith("invoke_agent");
}

/** What assembly keeps of every span once read: its place in time, its parent, and the agent it names. */
type SpanLite = { traceId: string; spanId: string; parentSpanId: string | null; startNs: string; endNs: string; agentName?: string; functionId?: string };

const liteOf = (s: OtelSpan): SpanLite => ({
  traceId: s.traceId,
  spanId: s.spanId,
  parentSpanId: s.parentSpanId,
  startNs: s.startNs,
  endNs: s.endNs,
  agentName: text(s.attributes["gen_ai.agent.name"]),
  functionId: text(s.attributes["ai.telemetry.functionId"]),
});

/** The agent a span works for: its own `gen_ai.agent.name`, an enclosing agent span's, or the AI SDK's functionId. */
function agentOf(span: SpanLite, byId: Map<string, SpanLite>): string | undefined {
  let current: SpanLite | undefined = span;
  for (let depth = 0; current && depth < 64; depth++) {
    if (current.agentName) return current.agentName;
    current = current.parentSpanId ? byId.get(current.parentSpanId) : undefined;
  }
  return span.functionId;
}

type ModelCall = { span: OtelSpan; system?: Msg; input: Msg[]; output: Msg[]; info: CallInfo };

/** A model call's history and answer, in whichever convention its span carries them; undefined for other spans (its agent is found later, when every span is known). */
function readModelCall(span: OtelSpan): ModelCall | undefined {
  const a = span.attributes;
  let system: Msg | undefined;
  let input: Msg[] = [];
  let output: Msg[] = [];
  if (a["gen_ai.input.messages"] !== undefined || a["gen_ai.output.messages"] !== undefined) {
    system = readSystemInstructions(a["gen_ai.system_instructions"]);
    input = readMessages(a["gen_ai.input.messages"]);
    output = readMessages(a["gen_ai.output.messages"]);
  } else if (a["ai.prompt.messages"] !== undefined) {
    // The AI SDK's provider call span (ai.generateText.doGenerate, ai.streamText.doStream); the outer
    // ai.generateText span only repeats the first prompt and the last answer, so it is not a call.
    input = readMessages(a["ai.prompt.messages"]);
    const out = readAiSdkOutput(a);
    output = out ? [out] : [];
  } else if (span.events.some((e) => e.name.startsWith("gen_ai."))) {
    ({ input, output } = readEvents(span));
    if (!input.length && !output.length) return undefined;
  } else return undefined;
  const systems = input.filter((m) => m.role === "system");
  if (!system && systems.length) system = { role: "system", parts: systems.flatMap((m) => m.parts) };
  const info: CallInfo = {
    traceId: span.traceId,
    spanId: span.spanId,
    startNs: span.startNs,
    model: text(a["gen_ai.response.model"]) ?? text(a["gen_ai.request.model"]) ?? text(a["ai.response.model"]) ?? text(a["ai.model.id"]),
    inputTokens: num(a["gen_ai.usage.input_tokens"]) ?? num(a["ai.usage.inputTokens"]) ?? num(a["ai.usage.promptTokens"]),
    outputTokens: num(a["gen_ai.usage.output_tokens"]) ?? num(a["ai.usage.outputTokens"]) ?? num(a["ai.usage.completionTokens"]),
    latencyMs: durationMs(span),
    finishReason: finishReasonOf(a) ?? output.find((m) => m.finishReason)?.finishReason,
  };
  return { span, system, input: input.filter((m) => m.role !== "system"), output, info };
}

function finishReasonOf(a: Attributes): string | undefined {
  const reasons = a["gen_ai.response.finish_reasons"];
  if (Array.isArray(reasons) && typeof reasons[0] === "string") return reasons[0];
  return text(a["ai.response.finishReason"]);
}

/** What a message says, for comparing one call's history with another's: reasoning is often dropped from history, so it is left out. */
function keyOf(m: Msg): string {
  const parts = m.parts
    .filter((p) => p.type !== "reasoning")
    .map((p) => (p.type === "text" ? ["t", p.text] : p.type === "tool_call" ? ["c", p.id ?? "", p.name, canonical(p.arguments)] : p.type === "tool_result" ? ["r", p.id ?? "", canonical(p.result)] : []));
  return JSON.stringify([m.role, parts]);
}

/** JSON with sorted keys, so `{a, b}` and `{b, a}` compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

/**
 * Merge one call's messages into the transcript: the longest run of them that the transcript already
 * ends with (usually all of it: the history so far) is kept once, the rest is appended.
 */
function mergeInto(transcript: TranscriptMsg[], keys: string[], seq: TranscriptMsg[]): void {
  const seqKeys = seq.map(keyOf);
  let overlap = 0;
  for (let k = Math.min(transcript.length, seq.length); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = keys[transcript.length - k + i] === seqKeys[i];
    if (same) {
      overlap = k;
      break;
    }
  }
  for (let i = 0; i < overlap; i++) {
    // The same message seen again: keep the version that says more (the call's own answer, with reasoning).
    const existing = transcript[transcript.length - overlap + i];
    const incoming = seq[i];
    if (!existing.origin && incoming.origin) transcript[transcript.length - overlap + i] = incoming;
  }
  for (let i = overlap; i < seq.length; i++) {
    transcript.push(seq[i]);
    keys.push(seqKeys[i]);
  }
}

type ToolRun = { id?: string; name?: string; arguments?: unknown; result?: unknown; hasResult: boolean; agent?: string };

function readToolRun(span: OtelSpan): ToolRun {
  const a = span.attributes;
  const resultAttr = a["gen_ai.tool.call.result"] ?? a["ai.toolCall.result"];
  return {
    id: text(a["gen_ai.tool.call.id"]) ?? text(a["ai.toolCall.id"]),
    name: text(a["gen_ai.tool.name"]) ?? text(a["ai.toolCall.name"]),
    arguments: parseMaybeJson(a["gen_ai.tool.call.arguments"] ?? a["ai.toolCall.args"]),
    result: parseMaybeJson(resultAttr),
    hasResult: resultAttr !== undefined,
  };
}

/** Tool results only an execute_tool span holds (the run ended on a tool call): added after the call. */
function addToolResults(transcript: TranscriptMsg[], runs: ToolRun[]): void {
  const answered = new Set(transcript.flatMap((m) => m.parts.filter((p) => p.type === "tool_result" && p.id).map((p) => (p as { id: string }).id)));
  for (let i = transcript.length - 1; i >= 0; i--) {
    const m = transcript[i];
    if (m.role !== "assistant") continue;
    const missing = m.parts.filter((p): p is Extract<Part, { type: "tool_call" }> => p.type === "tool_call" && !!p.id && !answered.has(p.id));
    const results: Part[] = [];
    for (const call of missing) {
      const run = runs.find((r) => r.id === call.id && r.hasResult);
      if (run) results.push({ type: "tool_result", id: call.id, name: run.name ?? call.name, result: run.result });
    }
    if (!results.length) continue;
    let at = i + 1;
    while (at < transcript.length && transcript[at].role === "tool") at++;
    transcript.splice(at, 0, { role: "tool", parts: results });
  }
}

const emptyStep = (): AssembledStep => ({ thinking: null, toolCall: null, toolResult: null, outputContent: null, outputStructured: null, modelName: null, agentName: null });

/** The transcript folded into Turnscope messages: an assistant turn (its messages and the tool replies between them) is one message with steps. */
function fold(system: Msg | undefined, transcript: TranscriptMsg[], runs: ToolRun[]): AssembledMessage[] {
  const out: AssembledMessage[] = [];
  if (system) out.push({ role: "system", content: system.parts.map((p) => (p.type === "text" ? p.text : "")).filter(Boolean).join("\n\n") || null, meta: null, steps: [] });
  let turn: { texts: string[]; steps: AssembledStep[]; origins: CallInfo[]; lastAgent: string | null } | undefined;
  const close = () => {
    if (!turn) return;
    const hasSteps = turn.steps.some((s) => s.outputContent === null);
    out.push({
      role: "assistant",
      content: turn.texts.length ? (hasSteps ? turn.texts[turn.texts.length - 1] : turn.texts.join("\n\n")) : null,
      meta: turnMeta(turn.origins),
      steps: hasSteps ? turn.steps : [],
    });
    turn = undefined;
  };
  for (const m of transcript) {
    if (m.role === "assistant") {
      turn ??= { texts: [], steps: [], origins: [], lastAgent: null };
      if (m.origin) turn.origins.push(m.origin);
      const modelName = m.origin?.model ?? null;
      const agentName = m.origin?.agent ?? null;
      if (agentName) turn.lastAgent = agentName;
      for (const p of m.parts) {
        const step = { ...emptyStep(), modelName, agentName };
        if (p.type === "text") {
          turn.texts.push(p.text);
          turn.steps.push({ ...step, outputContent: p.text });
        } else if (p.type === "reasoning") turn.steps.push({ ...step, thinking: p.text });
        else if (p.type === "tool_call") turn.steps.push({ ...step, toolCall: { name: p.name, arguments: p.arguments, ...(p.id ? { id: p.id } : {}) } });
      }
      continue;
    }
    if (m.role === "tool" && turn) {
      for (const p of m.parts) {
        if (p.type !== "tool_result" && p.type !== "text") continue;
        const run = p.type === "tool_result" && p.id ? runs.find((r) => r.id === p.id) : undefined;
        turn.steps.push({ ...emptyStep(), toolResult: p.type === "tool_result" ? p.result : p.text, agentName: run?.agent ?? turn.lastAgent });
      }
      continue;
    }
    close();
    const texts = m.parts.flatMap((p) => (p.type === "text" ? [p.text] : []));
    const content = m.role === "tool" && !texts.length ? toolText(m.parts) : texts.length ? texts.join("\n\n") : null;
    out.push({ role: m.role, content, meta: null, steps: [] });
  }
  close();
  return out;
}

function toolText(parts: Part[]): string | null {
  const r = parts.find((p) => p.type === "tool_result");
  if (!r || r.type !== "tool_result") return null;
  return typeof r.result === "string" ? r.result : JSON.stringify(r.result);
}

/** Message meta of an assistant turn: the model calls that wrote it, summed. */
function turnMeta(origins: CallInfo[]): Record<string, unknown> | null {
  if (!origins.length) return null;
  const last = origins[origins.length - 1];
  const sum = (pick: (o: CallInfo) => number | undefined) => (origins.some((o) => pick(o) !== undefined) ? origins.reduce((n, o) => n + (pick(o) ?? 0), 0) : undefined);
  const meta: Record<string, unknown> = {
    timestamp: nsToIso(origins[0].startNs),
    model: last.model,
    agent: last.agent,
    input_tokens: sum((o) => o.inputTokens),
    output_tokens: sum((o) => o.outputTokens),
    latency_ms: Math.round(origins.reduce((n, o) => n + o.latencyMs, 0)),
    model_calls: origins.length,
    finish_reason: last.finishReason,
    trace_id: last.traceId,
    span_id: last.spanId,
  };
  for (const k of Object.keys(meta)) if (meta[k] === undefined) delete meta[k];
  return meta;
}

/** The tools a model call declared (`gen_ai.tool.definitions`, the AI SDK's `ai.prompt.tools`). */
function toolDefinitionsOf(span: OtelSpan): unknown[] {
  const a = span.attributes;
  const defs = parseMaybeJson(a["gen_ai.tool.definitions"]);
  const sdkTools = a["ai.prompt.tools"];
  return Array.isArray(defs) ? defs : Array.isArray(sdkTools) ? sdkTools.map(parseMaybeJson) : [];
}

type AgentSpan = { lite: SpanLite; name: string; description?: string };

/** Agents with the tools their calls declared. */
function agentsOf(agentSpans: AgentSpan[], declared: Array<{ info: CallInfo; defs: unknown[] }>): unknown[] | null {
  const agents = new Map<string, { name: string; description?: string; tools: Record<string, unknown> }>();
  const agent = (name: string) => {
    let a = agents.get(name);
    if (!a) agents.set(name, (a = { name, tools: {} }));
    return a;
  };
  for (const s of agentSpans) {
    const a = agent(s.name);
    if (s.description) a.description = s.description;
  }
  for (const { info, defs } of declared) {
    const owner = agent(info.agent ?? "assistant");
    for (const d of defs) {
      if (!d || typeof d !== "object" || Array.isArray(d)) continue;
      const def = d as Record<string, unknown>;
      const fn = def.function && typeof def.function === "object" ? (def.function as Record<string, unknown>) : def;
      if (typeof fn.name !== "string") continue;
      owner.tools[fn.name] = { name: fn.name, description: fn.description, parameters: fn.parameters ?? fn.inputSchema ?? fn.input_schema };
    }
  }
  if (!agents.size) return null;
  return [...agents.values()].map((a) => ({ name: a.name, ...(a.description ? { description: a.description } : {}), ...(Object.keys(a.tools).length ? { tools: a.tools } : {}) }));
}

/** Conversation meta: the resource's service name, version and environment, and where the spans came from. */
function conversationMeta(key: string, spans: SpanLite[], resource: Attributes): Record<string, unknown> {
  const traceIds = new Set<string>();
  for (const s of spans) {
    if (traceIds.size >= 50) break;
    traceIds.add(s.traceId);
  }
  const meta: Record<string, unknown> = {
    source: "opentelemetry",
    conversation_key: key,
    service_name: text(resource["service.name"]),
    service_version: text(resource["service.version"]),
    deployment_environment: text(resource["deployment.environment.name"]) ?? text(resource["deployment.environment"]),
    trace_ids: [...traceIds],
    span_count: spans.length,
    started_at: spans.length ? nsToIso(spans[0].startNs) : undefined,
  };
  for (const k of Object.keys(meta)) if (meta[k] === undefined) delete meta[k];
  return meta;
}

/** Model calls in start order; calls that started at the same instant (clock resolution) by how much history they carry. */
type CallOrder = { lite: SpanLite; inputLength: number };
const byCallOrder = (a: CallOrder, b: CallOrder) =>
  a.lite.startNs !== b.lite.startNs ? byStart(a.lite, b.lite) : a.inputLength - b.inputLength || byStart(a.lite, b.lite);

/** `into` (sorted by `order`) with `items` (sorted too) merged in. */
function mergeSorted<T>(into: T[], items: T[], order: (a: T, b: T) => number): T[] {
  if (!items.length) return into;
  if (!into.length || order(into[into.length - 1], items[0]) < 0) return into.concat(items);
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < into.length || j < items.length) out.push(j >= items.length || (i < into.length && order(into[i], items[j]) <= 0) ? into[i++] : items[j++]);
  return out;
}

/**
 * One conversation being assembled from its spans, which may come a few at a time. Each span is read
 * once (its messages parsed, its history merged into the transcript); what is kept is the transcript
 * and a small record per span, not the spans. Spans can be added while their model calls start after
 * every call already merged (the usual case: an agent's next turn, its enclosing agent span arriving
 * late, tool spans in any order); a model call that would go before one already merged makes `add`
 * answer false, and the conversation must then be assembled again from all of its spans.
 */
export class ConversationAssembly {
  private spans: SpanLite[] = [];
  private readonly byId = new Map<string, SpanLite>();
  private firstResource: Attributes = {};
  private agentSpans: AgentSpan[] = [];
  private runs: Array<{ lite: SpanLite; run: ToolRun }> = [];
  private readonly callSpans = new Map<CallInfo, SpanLite>();
  private readonly declared: Array<{ info: CallInfo; defs: unknown[] }> = [];
  private lastCall: CallOrder | undefined;
  private system: Msg | undefined;
  private readonly transcript: TranscriptMsg[] = [];
  private readonly keys: string[] = [];

  /** How much this holds (spans and transcript messages), for bounding a cache of assemblies. */
  get weight(): number {
    return this.spans.length + this.transcript.length;
  }

  /** Add spans not added before; false (and nothing added) when one of their model calls goes before a call already merged. */
  add(input: OtelSpan[]): boolean {
    const spans = [...input].sort(byStart);
    const calls = spans
      .map((s) => readModelCall(s))
      .filter((c): c is ModelCall => c !== undefined)
      .map((call) => ({ call, order: { lite: liteOf(call.span), inputLength: call.input.length } }))
      .sort((a, b) => byCallOrder(a.order, b.order));
    if (calls.length && this.lastCall && byCallOrder(this.lastCall, calls[0].order) > 0) return false;

    const lites = spans.map(liteOf);
    if (lites.length && (!this.spans.length || byStart(lites[0], this.spans[0]) < 0)) this.firstResource = spans[0].resource ?? {};
    this.spans = mergeSorted(this.spans, lites, byStart);
    // As a map over the spans in start order: of two spans with one id, the later one's.
    for (const lite of lites) {
      const known = this.byId.get(lite.spanId);
      if (!known || byStart(known, lite) < 0) this.byId.set(lite.spanId, lite);
    }
    const agentSpans: AgentSpan[] = [];
    const runs: Array<{ lite: SpanLite; run: ToolRun }> = [];
    spans.forEach((s, i) => {
      if (isAgentSpan(s)) {
        const name = text(s.attributes["gen_ai.agent.name"]);
        if (name) agentSpans.push({ lite: lites[i], name, description: text(s.attributes["gen_ai.agent.description"]) });
      }
      if (isToolSpan(s)) runs.push({ lite: lites[i], run: readToolRun(s) });
    });
    this.agentSpans = mergeSorted(this.agentSpans, agentSpans, (a, b) => byStart(a.lite, b.lite));
    this.runs = mergeSorted(this.runs, runs, (a, b) => byStart(a.lite, b.lite));

    for (const { call, order } of calls) {
      this.system ??= call.system;
      this.callSpans.set(call.info, order.lite);
      const defs = toolDefinitionsOf(call.span);
      if (defs.length) this.declared.push({ info: call.info, defs });
      const output: TranscriptMsg[] = call.output.map((m) => (m.role === "assistant" ? { ...m, origin: call.info } : m));
      mergeInto(this.transcript, this.keys, [...call.input, ...output]);
      this.lastCall = order;
    }
    return true;
  }

  /** The conversation as its spans so far make it. */
  result(key: string): AssembledConversation {
    // Agents are found now: a call's enclosing agent span often ends, and so arrives, after the call.
    for (const [info, lite] of this.callSpans) info.agent = agentOf(lite, this.byId);
    const runs = this.runs.map(({ lite, run }) => ({ ...run, agent: agentOf(lite, this.byId) }));
    const transcript = [...this.transcript];
    addToolResults(transcript, runs);
    return {
      name: key,
      description: null,
      meta: conversationMeta(key, this.spans, this.firstResource),
      agents: agentsOf(this.agentSpans, this.declared),
      messages: fold(this.system, transcript, runs),
    };
  }
}

/** One conversation from all of its spans, in any order of arrival. */
export function assembleConversation(key: string, input: OtelSpan[]): AssembledConversation {
  const assembly = new ConversationAssembly();
  assembly.add(input);
  return assembly.result(key);
}
