/**
 * Text renderings of a loaded conversation for judge prompts: transcript lines, step summaries, step
 * details and the agent list. Pure functions; `null` means "no value" (the caller writes `(none)`).
 * The `…Doc` forms keep each message text and step field as a named piece, so that a prompt too long
 * for the judge's context can be cut item by item (lib/metrics/evidence.ts).
 */
import type { JudgeMessage, JudgeStep } from "@/lib/conversation-tree";
import { docText, joinDocs, piece, type Doc } from "./evidence";

export type { ConversationTree, JudgeMessage, JudgeStep } from "@/lib/conversation-tree";

export const NONE = "(none)";

/** A value as prompt text: strings as they are, objects as compact JSON; absent or blank → null. */
export function renderValue(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value.trim() === "" ? null : value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value);
}

/** The same text, compared the way a reader would: surrounding and repeated whitespace do not count. */
function sameText(a: string | null, b: string | null): boolean {
  return a !== null && b !== null && a.replace(/\s+/g, " ").trim() === b.replace(/\s+/g, " ").trim();
}

/** Continuation lines of a step field stay inside their bullet. */
function indent(text: string): string {
  return text.replace(/\n/g, "\n    ");
}

const stepParts: Array<[label: string, pick: (s: JudgeStep) => unknown]> = [
  ["thinking", (s) => s.thinking],
  ["tool_call", (s) => s.toolCall],
  ["tool_result", (s) => s.toolResult],
  ["output", (s) => s.outputContent],
  ["output_structured", (s) => s.outputStructured],
];

/** What the transcript of one message must not cut, and what it already shows. */
type StepContext = {
  /** Item name of the message, e.g. `message 3 (assistant)`. */
  item: string;
  /** The message's own text: a step output equal to it is not written a second time. */
  reply: string | null;
  /** Keep this step's output uncut (it is the final output). */
  keepOutputOf?: JudgeStep;
};

/**
 * One indented line per step, every field complete: `  - step 2 (billing): tool_call: {...}; ...`. An
 * output that repeats the message text above is named, not repeated.
 */
export function stepSummaryDoc(step: JudgeStep, number: number, context?: StepContext): Doc {
  const parts: Doc[] = stepParts.flatMap(([label, pick]): Doc[] => {
    const text = renderValue(pick(step));
    if (text === null) return [];
    if (label === "output" && sameText(text, context?.reply ?? null)) return [[`${label}: (the message text above)`]];
    const keep = label === "output" && context?.keepOutputOf === step;
    return [[`${label}: `, piece(`${context?.item ? `${context.item} ` : ""}step ${number} ${label}`, indent(text), keep)]];
  });
  const agent = step.agentName ? ` (${step.agentName})` : "";
  return [`  - step ${number}${agent}: `, ...(parts.length ? joinDocs(parts, "; ") : [NONE])];
}

/** One indented line per step (see `stepSummaryDoc`), uncut. */
export function stepSummaryLine(step: JudgeStep, number: number): string {
  return docText(stepSummaryDoc(step, number));
}

function messageItem(message: JudgeMessage): string {
  return `message ${message.position + 1} (${message.role})`;
}

/** `[role]: content` with the content as a piece. */
export function messageDoc(message: JudgeMessage, keep = false): Doc {
  const text = renderValue(message.content);
  return [`[${message.role}]: `, text === null ? NONE : piece(messageItem(message), text, keep)];
}

export function messageLine(message: JudgeMessage): string {
  return docText(messageDoc(message));
}

/** The final output of messages[0..endIndex]: the last assistant message's text, or its last step output. */
function finalOutput(messages: JudgeMessage[], endIndex: number): { message?: JudgeMessage; step?: JudgeStep } {
  for (let i = Math.min(endIndex, messages.length - 1); i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "assistant") continue;
    if (renderValue(m.content) !== null) return { message: m };
    return { step: m.steps.findLast((s) => renderValue(s.outputContent) !== null) };
  }
  return {};
}

/**
 * Transcript of messages[0..endIndex], every message once and every step field complete, as a
 * document whose pieces are the messages' texts and the steps' fields. The final output (and the last
 * message, the one a message-level metric judges) are marked `keep`. With `stepLimit`, the last
 * message is in progress: its content is not yet known and only its first steps are shown.
 */
export function transcriptDoc(messages: JudgeMessage[], endIndex: number, stepLimit?: number): Doc | null {
  const last = Math.min(endIndex, messages.length - 1);
  if (last < 0) return null;
  const final = stepLimit === undefined ? finalOutput(messages, last) : {};
  const lines: Doc[] = [];
  for (let i = 0; i <= last; i++) {
    const m = messages[i];
    const inProgress = i === last && stepLimit !== undefined;
    const reply = inProgress ? null : renderValue(m.content);
    lines.push(inProgress ? [`[${m.role}] (in progress, steps so far):`] : messageDoc(m, m === final.message || i === last));
    const steps = inProgress ? m.steps.slice(0, stepLimit) : m.steps;
    const context: StepContext = { item: messageItem(m), reply, keepOutputOf: inProgress ? steps.at(-1) : final.step };
    steps.forEach((s, n) => lines.push(stepSummaryDoc(s, n + 1, context)));
  }
  return joinDocs(lines, "\n");
}

/** The transcript as text, uncut (see `transcriptDoc`). */
export function transcript(messages: JudgeMessage[], endIndex: number, stepLimit?: number): string | null {
  const doc = transcriptDoc(messages, endIndex, stepLimit);
  return doc === null ? null : docText(doc);
}

/** `[role]: content` lines of the messages matching `keep`, without steps; the last one is never cut. */
export function messageLinesDoc(messages: JudgeMessage[], keep: (m: JudgeMessage) => boolean = () => true): Doc | null {
  const kept = messages.filter(keep);
  return kept.length ? joinDocs(kept.map((m, i) => messageDoc(m, i === kept.length - 1)), "\n") : null;
}

const detailFields: Array<[label: string, pick: (s: JudgeStep) => unknown]> = [
  ["thinking", (s) => s.thinking],
  ["tool_call", (s) => s.toolCall],
  ["tool_result", (s) => s.toolResult],
  ["output_content", (s) => s.outputContent],
  ["output_structured", (s) => s.outputStructured],
];

function stepHeading(step: JudgeStep, number: number, total: number): string {
  const who = [step.agentName ? `agent: ${step.agentName}` : null, step.modelName ? `model: ${step.modelName}` : null].filter(Boolean);
  return `Step ${number} of ${total}${who.length ? ` (${who.join(", ")})` : ""}`;
}

/** A step in full: heading, then every field (`(none)` where absent when `allFields`). */
export function stepDetailDoc(step: JudgeStep, number: number, total: number, allFields = true, keepOutput = false): Doc {
  const doc: Doc = [stepHeading(step, number, total)];
  for (const [label, pick] of detailFields) {
    const text = renderValue(pick(step));
    if (text === null && !allFields) continue;
    doc.push(`\n${label}: `, text === null ? NONE : piece(`step ${number} ${label}`, text, keepOutput && label === "output_content"));
  }
  return doc;
}

export function stepDetail(step: JudgeStep, number: number, total: number, allFields = true): string {
  return docText(stepDetailDoc(step, number, total, allFields));
}

/** Every step of a message in full, present fields only, separated by blank lines; the last output is kept. */
export function stepsDetailDoc(steps: JudgeStep[]): Doc | null {
  if (!steps.length) return null;
  return joinDocs(
    steps.map((s, i) => stepDetailDoc(s, i + 1, steps.length, false, i === steps.length - 1)),
    "\n\n",
  );
}

type Named = { name?: unknown; description?: unknown };

function asRecord(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function parameterList(parameters: unknown): string {
  const record = asRecord(parameters);
  if (!record) return "";
  // Either a JSON Schema object ({type: "object", properties}) or a plain name → type map.
  const props = asRecord(record.properties) ?? record;
  return Object.entries(props)
    .map(([name, spec]) => {
      const type = typeof spec === "string" ? spec : renderValue(asRecord(spec)?.type) ?? renderValue(spec);
      return `${name}: ${type}`;
    })
    .join(", ");
}

function toolLines(tools: unknown): string[] | null {
  const entries: Array<[string, unknown]> = Array.isArray(tools)
    ? tools.map((t, i) => [String(asRecord(t)?.name ?? `tool ${i + 1}`), t])
    : Object.entries(asRecord(tools) ?? {});
  if (!Array.isArray(tools) && !asRecord(tools)) return null;
  return entries.map(([key, tool]) => {
    const t = asRecord(tool) as (Named & { parameters?: unknown }) | null;
    const name = typeof t?.name === "string" ? t.name : key;
    const description = typeof t?.description === "string" && t.description ? ` — ${t.description}` : "";
    return `  - ${name}(${parameterList(t?.parameters)})${description}`;
  });
}

/** Agents and their tools, one agent per paragraph; shapes it does not know are shown as JSON. */
export function formatAgents(agents: unknown): string | null {
  if (agents === null || agents === undefined) return null;
  const list = Array.isArray(agents) ? agents : asRecord(agents) ? Object.values(agents as object) : null;
  if (!list) return renderValue(agents);
  if (list.length === 0) return null;
  const blocks = list.map((agent, i) => {
    const a = asRecord(agent);
    if (!a) return renderValue(agent) ?? NONE;
    const name = typeof a.name === "string" ? a.name : `agent ${i + 1}`;
    const description = typeof a.description === "string" && a.description ? ` — ${a.description}` : "";
    const tools = a.tools === undefined ? [] : toolLines(a.tools);
    const toolText = tools === null ? [`  tools: ${renderValue(a.tools)}`] : tools.length ? ["  tools:", ...tools] : ["  tools: (none)"];
    return [`${name}${description}`, ...toolText].join("\n");
  });
  return blocks.join("\n");
}
