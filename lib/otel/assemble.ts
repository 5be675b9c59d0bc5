/**
 * A conversation's spans → one Turnscope conversation (pure). Every model call carries the whole
 * history so far, so the conversation is that history once: the calls are read in start order and
 * each one's input and output are merged into one transcript, keeping only what extends it. Tool
 * calls, tool results and reasoning become steps of the assistant turn, folded as the file import folds
 * them (lib/import/formats/turns.ts); model, agent, tokens and latency go to message meta, the
 * resource's service name, version and environment to conversation meta.
 */
import { parseMaybeJson, readAiSdkOutput, readEvents, readMessages, readSystemInstructions, type Msg, type Part, type Role } from "./messages";
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

export type AssembledStep = {
  thinking: string | null;
  toolCall: unknown;
  toolResult: unknown;
  outputContent: string | null;
  outputStructured: unknown;
  modelName: string | null;
  agentName: string | null;
};
export type AssembledMessage = { role: Role; content: string | null; meta: Record<string, unknown> | null; steps: AssembledStep[] };
export type AssembledConversation = {
  name: string | null;
  description: string | null;
  meta: Record<string, unknown>;
  agents: unknown[] | null;
  messages: AssembledMessage[];
};

const num = (v: AttrValue | undefined): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : undefined);
const text = (v: AttrValue | undefined): string | undefined => (typeof v === "string" && v ? v : undefined);

const byStart = (a: OtelSpan, b: OtelSpan) =>
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

/** The agent a span works for: its own `gen_ai.agent.name`, an enclosing agent span's, or the AI SDK's functionId. */
function agentOf(span: OtelSpan, byId: Map<string, OtelSpan>): string | undefined {
  let current: OtelSpan | undefined = span;
  for (let depth = 0; current && depth < 64; depth++) {
    const name = text(current.attributes["gen_ai.agent.name"]);
    if (name) return name;
    current = current.parentSpanId ? byId.get(current.parentSpanId) : undefined;
  }
  return text(span.attributes["ai.telemetry.functionId"]);
}

type ModelCall = { span: OtelSpan; system?: Msg; input: Msg[]; output: Msg[]; info: CallInfo };

/** A model call's history and answer, in whichever convention its span carries them; undefined for other spans. */
function readModelCall(span: OtelSpan, byId: Map<string, OtelSpan>): ModelCall | undefined {
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
    agent: agentOf(span, byId),
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

function readToolRun(span: OtelSpan, byId: Map<string, OtelSpan>): ToolRun {
  const a = span.attributes;
  const resultAttr = a["gen_ai.tool.call.result"] ?? a["ai.toolCall.result"];
  return {
    id: text(a["gen_ai.tool.call.id"]) ?? text(a["ai.toolCall.id"]),
    name: text(a["gen_ai.tool.name"]) ?? text(a["ai.toolCall.name"]),
    arguments: parseMaybeJson(a["gen_ai.tool.call.arguments"] ?? a["ai.toolCall.args"]),
    result: parseMaybeJson(resultAttr),
    hasResult: resultAttr !== undefined,
    agent: agentOf(span, byId),
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

/** Agents with the tools their calls declared (`gen_ai.tool.definitions`, the AI SDK's `ai.prompt.tools`). */
function agentsOf(spans: OtelSpan[], calls: ModelCall[]): unknown[] | null {
  const agents = new Map<string, { name: string; description?: string; tools: Record<string, unknown> }>();
  const agent = (name: string) => {
    let a = agents.get(name);
    if (!a) agents.set(name, (a = { name, tools: {} }));
    return a;
  };
  for (const s of spans) {
    if (!isAgentSpan(s)) continue;
    const name = text(s.attributes["gen_ai.agent.name"]);
    if (!name) continue;
    const a = agent(name);
    const description = text(s.attributes["gen_ai.agent.description"]);
    if (description) a.description = description;
  }
  for (const call of calls) {
    const a = call.span.attributes;
    const defs = parseMaybeJson(a["gen_ai.tool.definitions"]);
    const sdkTools = a["ai.prompt.tools"];
    const list: unknown[] = Array.isArray(defs) ? defs : Array.isArray(sdkTools) ? sdkTools.map(parseMaybeJson) : [];
    if (!list.length) continue;
    const owner = agent(call.info.agent ?? "assistant");
    for (const d of list) {
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
function conversationMeta(key: string, spans: OtelSpan[]): Record<string, unknown> {
  const resource = spans[0]?.resource ?? {};
  const traceIds = [...new Set(spans.map((s) => s.traceId))];
  const meta: Record<string, unknown> = {
    source: "opentelemetry",
    conversation_key: key,
    service_name: text(resource["service.name"]),
    service_version: text(resource["service.version"]),
    deployment_environment: text(resource["deployment.environment.name"]) ?? text(resource["deployment.environment"]),
    trace_ids: traceIds.slice(0, 50),
    span_count: spans.length,
    started_at: spans.length ? nsToIso(spans[0].startNs) : undefined,
  };
  for (const k of Object.keys(meta)) if (meta[k] === undefined) delete meta[k];
  return meta;
}

/** One conversation from all of its spans, in any order of arrival. */
export function assembleConversation(key: string, input: OtelSpan[]): AssembledConversation {
  const spans = [...input].sort(byStart);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  // Calls in start order; calls that started at the same instant (clock resolution) by how much history they carry.
  const calls = spans
    .map((s) => readModelCall(s, byId))
    .filter((c): c is ModelCall => c !== undefined)
    .sort((a, b) => (a.span.startNs !== b.span.startNs ? byStart(a.span, b.span) : a.input.length - b.input.length || byStart(a.span, b.span)));
  const runs = spans.filter(isToolSpan).map((s) => readToolRun(s, byId));
  let system: Msg | undefined;
  const transcript: TranscriptMsg[] = [];
  const keys: string[] = [];
  for (const call of calls) {
    system ??= call.system;
    const output: TranscriptMsg[] = call.output.map((m) => (m.role === "assistant" ? { ...m, origin: call.info } : m));
    mergeInto(transcript, keys, [...call.input, ...output]);
  }
  addToolResults(transcript, runs);
  return {
    name: key,
    description: null,
    meta: conversationMeta(key, spans),
    agents: agentsOf(spans, calls),
    messages: fold(system, transcript, runs),
  };
}
