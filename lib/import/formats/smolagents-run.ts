/**
 * smolagents run outputs (the benchmark's `<model>__<action type>__<set>__<date>.jsonl`: one run per line,
 * `{model_id, agent_action_type, question, answer, true_answer, source, intermediate_steps, token_counts, …}`).
 * `intermediate_steps` is the agent's memory as chat messages with content parts and roles `system`, `user`,
 * `assistant`, `tool-call`, `tool-response`. The call is written as a Python repr in the text of the
 * `tool-call` message ("Calling tools:\n[{'id': …, 'function': {'name': …, 'arguments': …}}]"); the
 * tool-calling agent's assistant text only repeats it ("Tool call <id>: calling '<name>' with arguments: …")
 * and is not stored twice; the code agent's assistant text (its thought and code) is its reasoning. A call
 * that failed before it ran is only in its error text ("Error executing tool '<name>' with arguments {…}:"):
 * it is a call too, with the error as its result. The run's answer and the reference (`true_answer`) are meta.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import { parsePythonLiteral } from "./python-literal";
import type { ConversationSource } from "./source-paths";
import { partsText } from "./text-parts";
import { convertMessages } from "./turns";

type Rec = Record<string, unknown>;
type Unit = { value: unknown; path: string; line?: number };

const roles = new Set(["system", "user", "assistant", "tool-call", "tool-response"]);

/** True when the first record's `intermediate_steps` are smolagents memory messages (a few keys checked). */
export function isSmolagentsRun(units: Unit[]): boolean {
  const first = units[0]?.value;
  if (!isRecord(first) || !Array.isArray(first.intermediate_steps) || !first.intermediate_steps.length) return false;
  const steps = first.intermediate_steps.slice(0, 8);
  return steps.every((s) => isRecord(s) && typeof s.role === "string" && roles.has(s.role)) && units.every((u) => isRecord(u.value) && Array.isArray(u.value.intermediate_steps));
}

/** The calls a "Calling tools:" text holds, as written by Python. */
function callsOf(text: string): Rec[] | undefined {
  const at = text.indexOf("[");
  if (!text.startsWith("Calling tools:") || at === -1) return undefined;
  const parsed = parsePythonLiteral(text.slice(at));
  if (!parsed || !Array.isArray(parsed.value)) return undefined;
  return (parsed.value as unknown[]).filter(isRecord).map((c) => {
    const fn = isRecord(c.function) ? c.function : c;
    return { id: c.id, function: { name: fn.name, arguments: isRecord(fn.arguments) ? fn.arguments : { code: fn.arguments } } };
  });
}

const renderedCall = /^Tool call \S+: calling '[^']+' with arguments: /;
const failedCall = /^Error:\nError executing tool '([^']+)' with arguments /;

/** Convert smolagents run records (one conversation each). */
export function convertSmolagentsRuns(units: Unit[]): Normalised {
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  const skipped: Record<string, number> = {};
  let total = 0;
  for (const unit of units) {
    const run = unit.value as Rec;
    const steps = (run.intermediate_steps as unknown[]).filter(isRecord);
    total += steps.length;
    const messages: Rec[] = [];
    let open = 0;
    let failures = 0;
    for (const m of steps) {
      const text = partsText(m.content);
      if (m.role === "system" || m.role === "user") {
        messages.push({ role: m.role, content: text });
      } else if (m.role === "assistant") {
        if (renderedCall.test(text)) {
          skipped["assistant text repeating its call"] = (skipped["assistant text repeating its call"] ?? 0) + 1;
          continue;
        }
        messages.push({ role: "assistant", content: null, reasoning: text || undefined });
      } else if (m.role === "tool-call") {
        const calls = callsOf(text);
        if (calls?.length) {
          open += calls.length;
          messages.push({ role: "assistant", content: null, tool_calls: calls });
        } else messages.push({ role: "assistant", content: text });
      } else if (m.role === "tool-response") {
        const failed = open === 0 ? failedCall.exec(text) : null;
        if (failed) {
          // The call failed before it ran: it is written only here, in the error.
          const args = parsePythonLiteral(text.slice(failed[0].length));
          failures++;
          const argsValue = args && isRecord(args.value) ? args.value : { input: text.slice(failed[0].length) };
          messages.push({ role: "assistant", content: null, tool_calls: [{ id: `failed_${failures}`, function: { name: failed[1], arguments: argsValue } }] });
        }
        open = Math.max(0, open - 1);
        messages.push({ role: "tool", content: text });
      }
    }
    const converted = convertMessages(messages);
    const meta: Rec = {};
    for (const [k, v] of Object.entries(run)) if (k !== "intermediate_steps") meta[k] = v;
    if (failures) meta.failed_calls = failures;
    const name = typeof run.original_question === "string" ? run.original_question.slice(0, 80) : typeof run.question === "string" ? run.question.slice(0, 80) : undefined;
    conversations.push({ name, meta, messages: converted.messages });
    sources.push({ path: unit.path, messagesPath: unit.path, line: unit.line, rawMessages: [run], wholeConversation: true });
  }
  return {
    format: "smolagents_run",
    data: { conversations },
    sources,
    structural: ["type", "role", "raw", "token_usage", "tool_calls"],
    records: {
      inFile: total,
      unit: `memory messages in ${units.length} runs`,
      skipped,
      reasons: [
        "each call written as a Python repr after 'Calling tools:' is a tool_call step, its tool-response the result; a call that failed before it ran is read from its error text",
      ],
    },
  };
}
