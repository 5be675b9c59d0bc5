/** Shared readers of a loaded conversation for checks: the entity's scope, its tool calls, text and meta. */
import type { JudgeStep } from "@/lib/conversation-tree";
import type { CheckContext, CheckEntity, CheckTree } from "./types";
import { isRecord } from "@/lib/vocabulary";

/** Locate the entity in the tree; throws when it is not part of it (a runner bug, not user input). */
export function contextOf(tree: CheckTree, entity: CheckEntity): CheckContext {
  if (entity.type === "conversation") return { tree, level: "conversation", messageIndex: -1, stepIndex: -1 };
  for (let mi = 0; mi < tree.messages.length; mi++) {
    const message = tree.messages[mi];
    if (entity.type === "message" && message.id === entity.id) return { tree, level: "message", message, messageIndex: mi, stepIndex: -1 };
    if (entity.type === "step") {
      const si = message.steps.findIndex((s) => s.id === entity.id);
      if (si >= 0) return { tree, level: "step", message, messageIndex: mi, step: message.steps[si], stepIndex: si };
    }
  }
  throw new Error(`${entity.type} ${entity.id} is not part of conversation ${tree.conversation.id}`);
}

export type ScopedStep = { step: JudgeStep; messageIndex: number; number: number };

/** The steps a cell covers: every step of the conversation, of the message, or the one step. */
export function scopeSteps(ctx: CheckContext): ScopedStep[] {
  if (ctx.level === "step" && ctx.step) return [{ step: ctx.step, messageIndex: ctx.messageIndex, number: ctx.stepIndex + 1 }];
  const messages = ctx.level === "message" && ctx.message ? [ctx.message] : ctx.tree.messages;
  const out: ScopedStep[] = [];
  for (const m of messages) {
    const mi = ctx.tree.messages.indexOf(m);
    m.steps.forEach((step, i) => out.push({ step, messageIndex: mi, number: i + 1 }));
  }
  return out;
}

/** Re-exported for this module's readers (one definition: lib/vocabulary.ts). */
export { isRecord };

export type ToolCall = { name: string; arguments: unknown; where: string };

/** `message 3, step 2` — how reasonings point at a step (1-based, as the conversation panel shows). */
export function whereOf(s: ScopedStep): string {
  return `message ${s.messageIndex + 1}, step ${s.number}`;
}

/** Arguments as an object when they are one (or a JSON string of one); otherwise as given. */
function parseArguments(args: unknown): unknown {
  if (typeof args !== "string") return args;
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/** The tool calls in the cell's scope, in order: `{name, arguments}` objects (OpenAI's `function` wrapper too). */
export function scopeToolCalls(ctx: CheckContext): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const s of scopeSteps(ctx)) {
    const raw = s.step.toolCall;
    const list = Array.isArray(raw) ? raw : raw == null ? [] : [raw];
    for (const item of list) {
      const fn = isRecord(item) && isRecord(item.function) ? item.function : item;
      if (isRecord(fn) && typeof fn.name === "string") calls.push({ name: fn.name, arguments: parseArguments(fn.arguments), where: whereOf(s) });
      else if (typeof fn === "string") calls.push({ name: fn, arguments: undefined, where: whereOf(s) });
    }
  }
  return calls;
}

/** The text a cell evaluates: the step's output, the message's content, or the conversation's last assistant message. */
export function evaluatedText(ctx: CheckContext): { text: string | null; what: string } {
  if (ctx.level === "step" && ctx.step) {
    const s = ctx.step;
    if (s.outputContent != null && s.outputContent !== "") return { text: s.outputContent, what: "the step's output" };
    if (s.outputStructured != null) return { text: JSON.stringify(s.outputStructured), what: "the step's structured output" };
    return { text: null, what: "the step's output" };
  }
  if (ctx.level === "message" && ctx.message) return { text: ctx.message.content, what: "the message" };
  const last = ctx.tree.messages.findLast((m) => m.role === "assistant" && m.content != null && m.content !== "");
  return { text: last?.content ?? null, what: "the last assistant message" };
}

/**
 * A value at a dot path (`meta.latency_ms`, `conversation.meta.expected`, `error.code`, `items.0`). A path
 * starting with `meta.` reads the entity's meta (a step reads its message's); `conversation.meta.` the conversation's.
 */
export function readMeta(ctx: CheckContext, path: string): { found: boolean; value: unknown } {
  const parts = path.split(".");
  let root: unknown;
  if (parts[0] === "conversation" && parts[1] === "meta") {
    root = ctx.tree.conversation.meta;
    parts.splice(0, 2);
  } else {
    root = ctx.level === "conversation" ? ctx.tree.conversation.meta : ctx.message?.meta;
    if (parts[0] === "meta") parts.shift();
  }
  return readPath(root, parts);
}

/** A value at already-split path parts; `found: false` when any part is missing. */
export function readPath(root: unknown, parts: string[]): { found: boolean; value: unknown } {
  let value = root;
  for (const part of parts) {
    if (isRecord(value) && Object.hasOwn(value, part)) value = value[part];
    else if (Array.isArray(value) && /^\d+$/.test(part) && Number(part) < value.length) value = value[Number(part)];
    else return { found: false, value: undefined };
  }
  return { found: true, value };
}

/** A short rendering of a value for a reasoning. */
export function show(value: unknown, max = 80): string {
  const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function list(names: string[]): string {
  return names.length ? names.map((n) => `'${n}'`).join(", ") : "none";
}

/** A value as text for pattern matching: strings as they are, everything else as JSON. */
export function renderResult(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "");
}
