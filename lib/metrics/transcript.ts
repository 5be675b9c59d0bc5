/**
 * Text renderings of a loaded conversation for judge prompts: transcript lines, step summaries, step
 * details and the agent list. Pure functions; `null` means "no value" (the caller writes `(none)`).
 */
import type { MessageRole } from "@/db/schema";

export type JudgeStep = {
  id: number;
  position: number;
  thinking: string | null;
  toolCall: unknown;
  toolResult: unknown;
  outputContent: string | null;
  outputStructured: unknown;
  modelName: string | null;
  agentName: string | null;
};

export type JudgeMessage = {
  id: number;
  position: number;
  role: MessageRole;
  content: string | null;
  steps: JudgeStep[];
};

/**
 * One conversation with its messages and steps in position order — the shape
 * `getConversationTree` in db/repositories/datasets.ts returns, so a loaded tree is passed as is.
 */
export type ConversationTree = {
  conversation: { id: number; goal: string | null; agents: unknown };
  messages: JudgeMessage[];
};

export const NONE = "(none)";

/** Steps are summarised in transcripts: long tool results would drown the conversation. */
const SUMMARY_LIMIT = 500;

/** A value as prompt text: strings as they are, objects as compact JSON; absent or blank → null. */
export function renderValue(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value.trim() === "" ? null : value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value);
}

function summarise(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > SUMMARY_LIMIT ? `${flat.slice(0, SUMMARY_LIMIT)}… (${flat.length - SUMMARY_LIMIT} more characters)` : flat;
}

const stepParts: Array<[label: string, pick: (s: JudgeStep) => unknown]> = [
  ["thinking", (s) => s.thinking],
  ["tool_call", (s) => s.toolCall],
  ["tool_result", (s) => s.toolResult],
  ["output", (s) => s.outputContent],
  ["output_structured", (s) => s.outputStructured],
];

/** One indented line per step: `  - step 2 (billing): tool_call: {...}; ...`. */
export function stepSummaryLine(step: JudgeStep, number: number): string {
  const parts = stepParts.flatMap(([label, pick]) => {
    const text = renderValue(pick(step));
    return text === null ? [] : [`${label}: ${summarise(text)}`];
  });
  const agent = step.agentName ? ` (${step.agentName})` : "";
  return `  - step ${number}${agent}: ${parts.length ? parts.join("; ") : NONE}`;
}

export function messageLine(message: JudgeMessage): string {
  return `[${message.role}]: ${renderValue(message.content) ?? NONE}`;
}

/**
 * Transcript of messages[0..endIndex] with steps summarised under each message. With `stepLimit`,
 * the last message is in progress: its content is not yet known and only its first steps are shown.
 */
export function transcript(messages: JudgeMessage[], endIndex: number, stepLimit?: number): string | null {
  const lines: string[] = [];
  for (let i = 0; i <= endIndex && i < messages.length; i++) {
    const m = messages[i];
    const inProgress = i === endIndex && stepLimit !== undefined;
    lines.push(inProgress ? `[${m.role}] (in progress, steps so far):` : messageLine(m));
    const steps = inProgress ? m.steps.slice(0, stepLimit) : m.steps;
    steps.forEach((s, n) => lines.push(stepSummaryLine(s, n + 1)));
  }
  return lines.length ? lines.join("\n") : null;
}

/** `[role]: content` lines of the messages matching `keep`, without steps. */
export function messageLines(messages: JudgeMessage[], keep: (m: JudgeMessage) => boolean = () => true): string | null {
  const lines = messages.filter(keep).map(messageLine);
  return lines.length ? lines.join("\n") : null;
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
export function stepDetail(step: JudgeStep, number: number, total: number, allFields = true): string {
  const lines = [stepHeading(step, number, total)];
  for (const [label, pick] of detailFields) {
    const text = renderValue(pick(step));
    if (text !== null || allFields) lines.push(`${label}: ${text ?? NONE}`);
  }
  return lines.join("\n");
}

/** Every step of a message in full, present fields only, separated by blank lines. */
export function stepsDetail(steps: JudgeStep[]): string | null {
  if (!steps.length) return null;
  return steps.map((s, i) => stepDetail(s, i + 1, steps.length, false)).join("\n\n");
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
