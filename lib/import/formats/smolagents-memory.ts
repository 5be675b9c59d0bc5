/**
 * smolagents memory steps: what `agent.memory.get_full_steps()` / `get_succinct_steps()` return and
 * people save as JSON — a list of step dicts (perhaps each with its `__class__`), or a record holding it under
 * `steps` or `logs` (with the agent's
 * `system_prompt` beside it when they kept that too), or JSON Lines of one step per line (a step callback
 * writing each as it ends). The steps, by their keys:
 *
 * - task: `{task, task_images}` — the user's message;
 * - planning: `{plan, model_input_messages, model_output_message, timing, token_usage}` — the plan is the
 *   assistant's thinking;
 * - action: `{step_number, timing, model_input_messages, tool_calls: [{id, type, function: {name,
 *   arguments}}], error: {type, message}, model_output_message, model_output, code_action, observations,
 *   action_output, token_usage, is_final_answer}` — the model's output is its thinking (a code agent's thought
 *   and code), each call a tool call, the observations (or the error) the first call's result, and the
 *   action output of the final step the answer;
 * - final answer: `{output}`; system prompt: `{system_prompt}`.
 *
 * A multi-agent run saved as a record of each agent's memory by the agent's name (`{"manager": [...],
 * "web_agent": {"steps": [...]}}`, every value a step list or a record holding one) is a conversation per
 * agent, its name in meta (`agent_name`) and before the task in the conversation's name.
 *
 * `model_input_messages` is what the model was sent at each step: the system prompt, the task and the
 * earlier steps again, rendered as chat messages. Each of those is stored once, from its own step; the
 * copies are listed as not imported, saying why. The system prompt is read from there when the file has no
 * system prompt step (get_full_steps leaves it out).
 */
import { isRecord, joinPath } from "../issues";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";
import { partsText } from "./text-parts";
import { convertMessages } from "./turns";

type Rec = Record<string, unknown>;
type Unit = { value: unknown; path: string; line?: number };

const str = (v: unknown): v is string => typeof v === "string";
const asText = (value: unknown) => (str(value) ? value : JSON.stringify(value ?? ""));

type Kind = "task" | "planning" | "action" | "final" | "system";

const classKinds: Record<string, Kind> = { TaskStep: "task", ActionStep: "action", PlanningStep: "planning", FinalAnswerStep: "final", SystemPromptStep: "system" };

function kindOf(step: unknown): Kind | undefined {
  if (!isRecord(step)) return undefined;
  // Saved with the step's class beside its fields (`__class__: "ActionStep"`), as some apps do.
  if (str(step.__class__) && classKinds[step.__class__]) return classKinds[step.__class__];
  if (str(step.task)) return "task";
  if (str(step.system_prompt)) return "system";
  if (str(step.plan) && "model_output_message" in step) return "planning";
  if (typeof step.step_number === "number" && ("tool_calls" in step || "model_output" in step || "observations" in step || "action_output" in step)) return "action";
  const keys = Object.keys(step).filter((k) => k !== "__class__");
  if (keys.length === 1 && keys[0] === "output") return "final";
  return undefined;
}

/** A list of memory steps: every element a step, at least one an action step. */
const isStepList = (list: unknown): list is Rec[] => Array.isArray(list) && list.length > 0 && list.every((s) => kindOf(s) !== undefined) && list.some((s) => kindOf(s) === "action");

/**
 * The runs a value holds: itself when it is a step list; its `steps` or `logs` when it is a record holding
 * one (the record's other fields are the run's); or, for a record of every agent's memory by the agent's
 * name, each agent's. `listPath`: where the step list sits in the file.
 */
type Run = { steps: Rec[]; record?: Rec; used?: string; agent?: string; path: string; listPath: string; value: unknown };

function ownRun(value: unknown, path: string): Run | undefined {
  if (isStepList(value)) return { steps: value, path, listPath: path, value };
  if (isRecord(value)) for (const key of ["steps", "logs"] as const) if (isStepList(value[key])) return { steps: value[key], record: value, used: key, path, listPath: joinPath(path, key), value };
  return undefined;
}

function runsOf(value: unknown, path: string): Run[] {
  const own = ownRun(value, path);
  if (own) return [own];
  if (!isRecord(value)) return [];
  const entries = Object.entries(value);
  const agents = entries.map(([agent, memory]) => ({ agent, run: ownRun(memory, joinPath(path, agent)) }));
  if (!entries.length || agents.some((a) => !a.run)) return [];
  return agents.map(({ agent, run }) => ({ ...run!, agent }));
}

/** JSON Lines of one step per line: the file is one run. */
export function smolagentsStepLines(units: Unit[]): Unit[] | undefined {
  return units.length > 1 && isStepList(units.map((u) => u.value)) ? [{ value: units.map((u) => u.value), path: "" }] : undefined;
}

/** Whether the upload's units are smolagents memory steps (a run each). */
export function isSmolagentsMemory(units: Unit[]): boolean {
  return units.length > 0 && units.every((u) => runsOf(u.value, u.path).length > 0);
}

/** The system prompt the model was sent: the first system message of a step's input. */
function systemFromInputs(steps: Rec[]): string {
  for (const step of steps) {
    const first = Array.isArray(step.model_input_messages) ? step.model_input_messages[0] : undefined;
    if (isRecord(first) && first.role === "system") return partsText(first.content);
  }
  return "";
}

function readSteps(steps: Rec[], systemPrompt: string): { messages: Rec[]; inputCharacters: number } {
  const messages: Rec[] = [];
  const system = systemPrompt || (steps.find((s) => kindOf(s) === "system")?.system_prompt as string | undefined) || systemFromInputs(steps);
  if (system) messages.push({ role: "system", content: system });
  let inputCharacters = 0;
  let answered: string | undefined;
  for (const step of steps) {
    for (const m of Array.isArray(step.model_input_messages) ? step.model_input_messages : []) if (isRecord(m)) inputCharacters += partsText(m.content).length;
    const kind = kindOf(step);
    if (kind === "task") messages.push({ role: "user", content: step.task });
    else if (kind === "planning") messages.push({ role: "assistant", content: null, reasoning: step.plan });
    else if (kind === "final") {
      const text = asText(step.output);
      if (text !== answered) messages.push({ role: "assistant", content: text });
      answered = text;
    } else if (kind === "action") {
      const output = str(step.model_output) || Array.isArray(step.model_output) ? partsText(step.model_output) : isRecord(step.model_output_message) ? partsText(step.model_output_message.content) : "";
      const calls = (Array.isArray(step.tool_calls) ? step.tool_calls : []).filter(isRecord).map((c) => {
        const fn = isRecord(c.function) ? c.function : c;
        return { id: c.id, function: { name: fn.name, arguments: isRecord(fn.arguments) ? fn.arguments : str(fn.arguments) ? { code: fn.arguments } : (fn.arguments ?? {}) } };
      });
      // A code agent's step saved without its tool_calls still holds the code it ran.
      if (!calls.length && str(step.code_action) && step.code_action) calls.push({ id: undefined, function: { name: "python_interpreter", arguments: { code: step.code_action } } });
      if (output) messages.push({ role: "assistant", content: null, reasoning: output });
      if (calls.length) messages.push({ role: "assistant", content: null, tool_calls: calls });
      const error = isRecord(step.error) ? `Error: ${str(step.error.type) ? `${step.error.type}: ` : ""}${asText(step.error.message)}` : undefined;
      const observed = [str(step.observations) ? step.observations : undefined, error].filter(Boolean).join("\n");
      if (observed) messages.push({ role: "tool", ...(calls.length ? { tool_call_id: calls[0].id } : {}), content: observed });
      if (step.is_final_answer === true && step.action_output !== undefined && step.action_output !== null) {
        answered = asText(step.action_output);
        messages.push({ role: "assistant", content: answered });
      }
    }
  }
  return { messages, inputCharacters };
}

/** Convert smolagents memory steps: one conversation per run (a list of steps, a record holding one, each agent's of a multi-agent record). */
export function convertSmolagentsMemory(units: Unit[]): Normalised {
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  let total = 0;
  let runs = 0;
  /** Characters of what the model was sent, by where the step lists sit (one place per agent). */
  const inputs = new Map<string, number>();
  for (const unit of units) {
    for (const { steps, record, used, agent, path, listPath, value } of runsOf(unit.value, unit.path)) {
      runs++;
      total += steps.length;
      const read = readSteps(steps, record && str(record.system_prompt) ? record.system_prompt : "");
      if (read.inputCharacters) {
        const at = listPath.replace(/\[\d+\]/g, "[]");
        inputs.set(at, (inputs.get(at) ?? 0) + read.inputCharacters);
      }
      const converted = convertMessages(read.messages);
      const conversation: Rec = { messages: converted.messages };
      const task = steps.find((s) => kindOf(s) === "task")?.task;
      const name = record && str(record.name) ? record.name : str(task) ? task.slice(0, 80) : undefined;
      if (name !== undefined || agent !== undefined) conversation.name = agent === undefined ? name : name ? `${agent}: ${name}` : agent;
      const meta: Rec = agent === undefined ? {} : { agent_name: agent };
      if (record) for (const [k, v] of Object.entries(record)) if (k !== used && k !== "system_prompt" && k !== "name") meta[k] = v;
      // Each model step's number, time and usage (an assistant turn holds several steps: its messages' meta could not).
      const timed = steps
        .filter((s) => kindOf(s) === "action" || kindOf(s) === "planning")
        .map((s) => ({ kind: kindOf(s), ...(s.step_number !== undefined ? { step_number: s.step_number } : {}), ...(isRecord(s.timing) ? { timing: s.timing } : {}), ...(isRecord(s.token_usage) ? { token_usage: s.token_usage } : {}) }));
      if (timed.length) meta.steps = timed;
      if (Object.keys(meta).length) conversation.meta = meta;
      conversations.push(conversation);
      // The run's raw record: the text accounting's paths start at it.
      sources.push({ path, messagesPath: path, line: unit.line, rawMessages: [value], wholeConversation: true });
    }
  }
  return {
    format: "smolagents_memory",
    data: { conversations },
    sources,
    // The model's input at each step is listed below as not imported (a copy); `raw` is the provider's response object.
    structural: ["model_input_messages", "raw", "observations_images", "task_images", "__class__"],
    notImported: [...inputs].map(([at, characters]) => ({
      path: `${at}[].model_input_messages[].content`,
      characters,
      reason: "what the model was sent at each step: the system prompt, the task and the earlier steps again, as chat messages; each is stored once, from its own step",
    })),
    records: {
      inFile: total,
      unit: `memory steps in ${runs} run${runs === 1 ? "" : "s"}`,
      skipped: {},
      reasons: ["each action step's output is the assistant's thinking, its tool calls are steps with the observations (or the error) as the first call's result, and a final step's output is the answer"],
    },
  };
}
