/**
 * How a mapping reads tool calls and their results (formats/mapping.ts): calls found in a field, in JSON text or
 * deeper inside a field (a model response an event carries), calls and outputs written as records of their own,
 * and the replies folded into the assistant turn holding their call (`tool_call_id`), each call id once.
 */
import { isRecord } from "../issues";
import { parseMaybeJson, toolCallStep } from "./turns";

/** The media parts of a content list (image, audio, file), as they are. */
export function mediaOf(parts: unknown[]): unknown[] {
  return parts.filter((p) => isRecord(p) && typeof p.type === "string" && /image|audio|file|document/.test(p.type));
}

const callIdKeys = ["call_id", "tool_call_id", "tool_use_id"];

/**
 * A record of a log that writes calls and their results as records of their own, without a role (Codex's
 * `function_call` / `function_call_output` items): a call (a name with arguments or input) is an assistant
 * message holding it; a record naming a call id with an output is that call's reply.
 */
export function looseToolRecord(m: Record<string, unknown>): Record<string, unknown> | undefined {
  if (typeof m.name === "string" && ("arguments" in m || "input" in m)) {
    const { name, arguments: args, input, call_id: callId, id, ...rest } = m;
    const call = { name, arguments: args !== undefined ? args : { input }, id: callId ?? id };
    const message: Record<string, unknown> = { role: "assistant", content: null, steps: [toolCallStep(call)] };
    if (Object.keys(rest).length) message.meta = rest;
    return message;
  }
  const idKey = callIdKeys.find((k) => typeof m[k] === "string");
  const output = m.output ?? m.result;
  if (idKey && output !== undefined) {
    const { output: _output, result: _result, [idKey]: _id, ...rest } = m;
    const reply: Record<string, unknown> = { role: "tool", content: typeof output === "string" ? output : JSON.stringify(output) };
    if (Object.keys(rest).length) reply.meta = rest;
    Object.defineProperty(reply, answersKey, { value: m[idKey], enumerable: false });
    return reply;
  }
  return undefined;
}

/** The tool call(s) a text holds as JSON (`{"name", "arguments"}` or a list of them); undefined for any other text. */
export function callsInText(text: string): Record<string, unknown>[] | undefined {
  const parsed = parseMaybeJson(text);
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const isCall = (c: unknown) => isRecord(c) && typeof c.name === "string" && ("arguments" in c || "input" in c || "parameters" in c);
  return list.length && list.every(isCall) ? list.map((c) => toolCallStep(c)) : undefined;
}

/** A tool call: a name (or `function.name`) with arguments or input. */
export function isCallLike(v: unknown): boolean {
  if (!isRecord(v)) return false;
  const fn = isRecord(v.function) ? v.function : v;
  return (typeof fn.name === "string" || typeof v.function === "string") && ("arguments" in fn || "input" in fn || "args" in fn || "arguments" in v);
}

/** The calls a value holds a few levels down (lists of calls inside records), in order. */
export function nestedCalls(value: unknown, depth = 0): unknown[] {
  if (depth > 6) return [];
  if (Array.isArray(value)) return value.every(isCallLike) && value.length ? value : value.flatMap((v) => nestedCalls(v, depth + 1));
  if (isRecord(value)) return Object.values(value).flatMap((v) => nestedCalls(v, depth + 1));
  return [];
}

/** Where a converted message remembers the call it answers (not enumerable: never stored). */
export const answersKey = "__answers";

/**
 * Tool replies folded into the assistant message holding their call: a tool message (or one holding only tool
 * results) becomes tool_result steps of the assistant message whose call has its id, else of the last assistant
 * message with calls. Only with `tool_call_id` set, so a mapping without it reads messages one for one.
 */
export function pairResults(messages: unknown[]): unknown[] {
  const out: unknown[] = [];
  const byCall = new Map<string, Record<string, unknown>>();
  let lastCaller: Record<string, unknown> | undefined;
  const seenCalls = new Set<string>();
  for (const m of messages) {
    if (!isRecord(m)) {
      out.push(m);
      continue;
    }
    // A call written again (the same model response on each event it caused) is the same call: kept once.
    if (Array.isArray(m.steps)) {
      m.steps = (m.steps as Array<Record<string, unknown>>).filter((st) => {
        const id = isRecord(st.tool_call) ? st.tool_call.id : undefined;
        if (typeof id !== "string") return true;
        if (seenCalls.has(id)) return false;
        seenCalls.add(id);
        return true;
      });
      if (!(m.steps as unknown[]).length) delete m.steps;
    }
    const steps = Array.isArray(m.steps) ? (m.steps as Array<Record<string, unknown>>) : [];
    const calls = steps.filter((st) => isRecord(st.tool_call));
    if (m.role === "assistant" && calls.length) {
      lastCaller = m;
      for (const st of calls) {
        const id = (st.tool_call as Record<string, unknown>).id;
        if (typeof id === "string") byCall.set(id, m);
      }
    }
    const onlyResults = steps.length > 0 && steps.every((st) => "tool_result" in st) && !m.content;
    const isReply = m.role === "tool" || (m.role !== "assistant" && onlyResults);
    const answers = (m as Record<string, unknown>)[answersKey];
    const target = (typeof answers === "string" ? byCall.get(answers) : undefined) ?? lastCaller;
    if (isReply && target) {
      const results = onlyResults ? steps : [{ tool_result: typeof m.content === "string" ? parseMaybeJson(m.content) : (m.content ?? "") }];
      const own = target.steps as Array<Record<string, unknown>>;
      // Before the turn's closing text, after its calls.
      const closing = own.length && "output_content" in own[own.length - 1] ? own.pop() : undefined;
      own.push(...results);
      if (closing) own.push(closing);
      // The reply's own fields (its ids, the tool's structured copy of the result) stay with the turn.
      if (isRecord(m.meta)) {
        const meta = isRecord(target.meta) ? target.meta : {};
        target.meta = { ...meta, tool_replies: [...(Array.isArray(meta.tool_replies) ? meta.tool_replies : []), m.meta] };
      }
      continue;
    }
    // An assistant message right after another (a call, its results, then the answer) continues the same turn.
    const previous = out[out.length - 1];
    if (m.role === "assistant" && isRecord(previous) && previous.role === "assistant" && Array.isArray(previous.steps) && (previous.steps as unknown[]).length) {
      const own = previous.steps as Array<Record<string, unknown>>;
      own.push(...steps.filter((st) => !("output_content" in st)));
      if (typeof m.content === "string" && m.content) {
        own.push({ output_content: m.content });
        previous.content = m.content;
      }
      if (steps.some((st) => isRecord(st.tool_call))) lastCaller = previous;
      for (const st of calls) {
        const id = (st.tool_call as Record<string, unknown>).id;
        if (typeof id === "string") byCall.set(id, previous);
      }
      // Each message's own fields are kept: the later ones under `continued`, in order.
      if (isRecord(m.meta)) {
        const meta = isRecord(previous.meta) ? previous.meta : {};
        previous.meta = { ...meta, continued: [...(Array.isArray(meta.continued) ? meta.continued : []), m.meta] };
      }
      continue;
    }
    out.push(m);
  }
  return out;
}
