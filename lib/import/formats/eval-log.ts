/**
 * Evaluation logs holding samples (Inspect AI's JSON log: `{version, status, eval: {task, model, …},
 * results, samples: [{id, epoch, input, target, messages, output, scores, metadata}]}`). Each sample is
 * a conversation: its `messages` are chat messages whose assistant `tool_calls` are `{id, function:
 * <name>, arguments: {…}}` and whose tool messages name the call (`tool_call_id`, `function`).
 * `input`, `target`, `scores` (each scorer's `{value, answer, explanation}`), `metadata` and the eval's
 * task and model go to the conversation's meta, so the scorer's verdict is a reference for agreement.
 * The sample's `output` repeats its last assistant message (its `usage` and model are kept) and
 * `events` is the transcript of how the messages came about: neither is stored as messages.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import { isMessageLike } from "./records";
import type { ConversationSource } from "./source-paths";
import { convertMessages } from "./turns";

type Rec = Record<string, unknown>;

/** True when the value is an eval log: samples that each hold a message list. */
export function isEvalLog(value: unknown): value is Rec {
  return (
    isRecord(value) &&
    Array.isArray(value.samples) &&
    value.samples.length > 0 &&
    value.samples.every((s) => isRecord(s) && Array.isArray(s.messages) && s.messages.every(isMessageLike) && ("target" in s || "scores" in s || "input" in s))
  );
}

/**
 * The messages, and the output's message when it holds calls the messages do not (an agent's final `submit`
 * is written only in `output` and the events): that call is part of the conversation.
 */
function withFinalOutput(messages: unknown[], output: unknown): unknown[] {
  const choice = isRecord(output) && Array.isArray(output.choices) && isRecord(output.choices[0]) ? output.choices[0] : undefined;
  const message = choice && isRecord(choice.message) ? choice.message : undefined;
  if (!message || !Array.isArray(message.tool_calls) || !message.tool_calls.length) return messages;
  const known = new Set<unknown>();
  for (const m of messages) if (isRecord(m) && Array.isArray(m.tool_calls)) for (const c of m.tool_calls) if (isRecord(c)) known.add(c.id);
  return message.tool_calls.every((c) => isRecord(c) && !known.has(c.id)) ? [...messages, message] : messages;
}

/** Convert an eval log's samples to conversations. */
export function convertEvalLog(log: Rec): Normalised {
  const evalInfo = isRecord(log.eval) ? log.eval : {};
  const shared: Rec = {};
  for (const key of ["task", "task_id", "model", "run_id", "created", "dataset"]) if (evalInfo[key] !== undefined) shared[key] = evalInfo[key];
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  let messagesInFile = 0;
  (log.samples as Rec[]).forEach((sample, i) => {
    const raw = withFinalOutput(sample.messages as unknown[], sample.output);
    messagesInFile += (sample.messages as unknown[]).length;
    const converted = convertMessages(raw);
    const meta: Rec = { eval: shared };
    for (const [k, v] of Object.entries(sample)) if (k !== "messages" && k !== "output" && k !== "events") meta[k] = v;
    if (isRecord(sample.output)) {
      if (sample.output.usage !== undefined) meta.usage = sample.output.usage;
      if (sample.output.model !== undefined) meta.output_model = sample.output.model;
    }
    conversations.push({ name: `${String(shared.task ?? "sample")} ${String(sample.id ?? i)}${sample.epoch !== undefined ? ` (epoch ${String(sample.epoch)})` : ""}`, meta, messages: converted.messages });
    const { events: _events, ...rest } = sample;
    sources.push({ path: `samples[${i}]`, messagesPath: `samples[${i}].messages`, rawMessages: [rest], wholeConversation: true });
  });
  return {
    format: "eval_log",
    data: { conversations },
    sources,
    structural: ["source", "function", "model", "stop_reason", "internal"],
    records: {
      inFile: messagesInFile,
      unit: `messages in ${(log.samples as unknown[]).length} samples`,
      skipped: {},
      reasons: ["each sample is a conversation; input, target and scores are in its meta", "an assistant's tool calls and the tool messages answering them became steps of its turn"],
    },
  };
}
