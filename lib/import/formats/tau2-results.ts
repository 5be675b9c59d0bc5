/**
 * tau2-bench results (`data/simulations/<run>.json`): `{timestamp, info: {agent_info, user_info,
 * environment_info: {domain_name, policy}, …}, tasks: [...], simulations: [{id, task_id, trial,
 * termination_reason, reward_info, agent_cost, user_cost, messages}]}`. One conversation per simulation.
 * The domain's policy is what the agent was told: it is the system message. Messages are
 * `{role, content, tool_calls: [{id, name, arguments: {…}}], turn_idx, cost, usage, raw_data}`; tool
 * messages carry the call's `id`. `raw_data` is the provider's response again (the tool call as its JSON
 * text, the user simulator's reply under role "assistant"): only the reasoning it alone holds
 * (`thinking_blocks`, `reasoning_content`) is read, as thinking steps. The simulation's `reward_info`
 * (reward, action and DB checks), its task (scenario and evaluation criteria) and the run's settings go
 * to the conversation's meta.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";
import { convertMessages } from "./turns";

type Rec = Record<string, unknown>;

/** True for a results file: simulations holding messages, next to tasks (a few keys of the first simulation checked). */
export function isTau2Results(value: unknown): value is Rec {
  if (!isRecord(value) || !Array.isArray(value.simulations) || !Array.isArray(value.tasks) || !value.simulations.length) return false;
  const first = value.simulations[0];
  return isRecord(first) && Array.isArray(first.messages) && "task_id" in first;
}

/** The reasoning only the provider's raw response holds. */
function reasoningOf(raw: unknown): string | undefined {
  if (!isRecord(raw)) return undefined;
  const parts: string[] = [];
  if (Array.isArray(raw.thinking_blocks)) for (const b of raw.thinking_blocks) if (isRecord(b) && typeof b.thinking === "string" && b.thinking) parts.push(b.thinking);
  const message = isRecord(raw.message) ? raw.message : raw;
  if (typeof message.reasoning_content === "string" && message.reasoning_content) parts.push(message.reasoning_content);
  return parts.length ? parts.join("\n\n") : undefined;
}

/** Convert a results file's simulations to conversations. */
export function convertTau2Results(file: Rec): Normalised {
  const info = isRecord(file.info) ? file.info : {};
  const env = isRecord(info.environment_info) ? info.environment_info : {};
  const policy = typeof env.policy === "string" && env.policy ? env.policy : undefined;
  const { policy: _policy, ...envRest } = env;
  const run: Rec = { ...info, environment_info: envRest };
  if (file.timestamp !== undefined) run.timestamp = file.timestamp;
  const tasks = new Map<string, unknown>();
  for (const t of file.tasks as unknown[]) if (isRecord(t) && t.id !== undefined) tasks.set(String(t.id), t);
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  let messagesInFile = 0;
  const skipped: Record<string, number> = {};
  (file.simulations as unknown[]).forEach((sim, i) => {
    if (!isRecord(sim)) return;
    const raw = Array.isArray(sim.messages) ? sim.messages : [];
    messagesInFile += raw.length;
    const messages: Rec[] = policy ? [{ role: "system", content: policy }] : [];
    // Calls the user simulator made (telecom's user tools) and their results: the user's, kept in its message's meta.
    let lastUser: Rec | undefined;
    const userCalls = new Set<string>();
    for (const m of raw) {
      if (!isRecord(m)) continue;
      const role = m.role;
      if (role === "tool") {
        const id = typeof m.id === "string" ? m.id : undefined;
        if (m.requestor === "user" || (id && userCalls.has(id))) {
          if (lastUser) ((lastUser.meta as Rec).tool_results as unknown[]).push({ id, content: m.content, error: m.error });
          continue;
        }
        messages.push({ role: "tool", tool_call_id: id, content: m.content ?? "", meta: m.error ? { error: true } : undefined });
        continue;
      }
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(isRecord) : [];
      if (role === "user") {
        lastUser = { role: "user", content: m.content ?? "", meta: { turn_idx: m.turn_idx, tool_calls: calls.length ? calls : undefined, tool_results: [] } };
        for (const c of calls) if (typeof c.id === "string") userCalls.add(c.id);
        messages.push(lastUser);
        continue;
      }
      messages.push({
        role: typeof role === "string" ? role : "assistant",
        content: m.content ?? null,
        reasoning: role === "assistant" ? reasoningOf(m.raw_data) : undefined,
        tool_calls: calls.length ? calls.map((c) => ({ id: c.id, function: { name: c.name, arguments: c.arguments ?? {} } })) : undefined,
      });
    }
    for (const m of messages) {
      const meta = m.meta as Rec | undefined;
      if (meta && Array.isArray(meta.tool_results) && !meta.tool_results.length) delete meta.tool_results;
    }
    const converted = convertMessages(messages);
    const meta: Rec = {};
    for (const [k, v] of Object.entries(sim)) if (k !== "messages") meta[k] = v;
    const task = tasks.get(String(sim.task_id));
    if (task !== undefined) meta.task = task;
    else skipped["simulation without its task"] = (skipped["simulation without its task"] ?? 0) + 1;
    meta.run = run;
    const reward = isRecord(sim.reward_info) ? sim.reward_info.reward : undefined;
    if (reward !== undefined) meta.reward = reward;
    conversations.push({ name: `task ${String(sim.task_id)}${sim.trial !== undefined ? ` (trial ${String(sim.trial)})` : ""}`, meta, messages: converted.messages });
    sources.push({ path: `simulations[${i}]`, messagesPath: `simulations[${i}].messages`, rawMessages: [sim, ...(task ? [task] : []), { ...info, timestamp: file.timestamp }], wholeConversation: true });
  });
  return {
    format: "tau2_results",
    data: { conversations },
    sources,
    structural: ["role", "requestor", "turn_idx", "timestamp", "signature", "raw_data", "id", "action_id"],
    records: {
      inFile: messagesInFile,
      unit: `messages in ${(file.simulations as unknown[]).length} simulations`,
      skipped,
      reasons: [
        "each simulation is a conversation whose system message is the domain policy; reward_info, its task and the run's settings are in its meta",
        "the provider's raw response repeats each message and call: only its reasoning is read, as thinking steps",
      ],
    },
  };
}
