/**
 * SWE-agent trajectories written before 1.0: the model's actions are free text (a command line in the last
 * fenced block of its reply, also as `action`), with no tool-call ids, and each observation comes back as a
 * user message (the output, then the open file, the directory and the prompt `bash-$`). A demonstration is
 * packed into one user message marked `is_demo`. Read as a person reads it: the system message, the task once
 * as the user's prompt, then one assistant turn in which each action is a tool call (named by its command's
 * first word, the whole command line as `command`) followed by the observation as its result and the thought
 * before it as reasoning; the demonstration is kept in the conversation's meta, not as a turn.
 */
import { isRecord } from "../issues";

type Rec = Record<string, unknown>;

/** True for a pre-1.0 history: messages without tool calls, and assistant messages carrying an action or a fenced command. */
export function isLegacyHistory(history: unknown[]): boolean {
  return (
    history.every((m) => isRecord(m) && !Array.isArray(m.tool_calls)) &&
    history.some((m) => isRecord(m) && m.role === "assistant" && (typeof m.action === "string" || (typeof m.content === "string" && m.content.includes("```"))))
  );
}

/** The command of an assistant message: its `action`, else the last fenced block of its text. */
function actionOf(m: Rec): { action: string; thought: string } {
  const content = typeof m.content === "string" ? m.content : "";
  if (typeof m.action === "string" && m.action.trim()) {
    const thought = typeof m.thought === "string" ? m.thought : content.slice(0, Math.max(0, content.lastIndexOf("```", content.lastIndexOf("```") - 1)));
    return { action: m.action, thought };
  }
  const end = content.lastIndexOf("```");
  const start = end > 0 ? content.lastIndexOf("```", end - 1) : -1;
  if (start === -1) return { action: "", thought: content };
  const block = content.slice(start + 3, end).replace(/^[^\n]*\n/, (first) => (first.trim() && !/^\w+$/.test(first.trim()) ? first : ""));
  return { action: block, thought: content.slice(0, start).trimEnd() };
}

/** The messages a pre-1.0 history stands for, in the chat shape convertMessages reads, and its demonstrations. */
export function legacyMessages(history: Rec[]): { messages: Rec[]; demonstrations: Rec[]; responses: string[] } {
  const messages: Rec[] = [];
  // The model's replies as written (thought and command together), kept whole in the conversation's meta.
  const responses: string[] = [];
  const demonstrations: Rec[] = [];
  let prompted = false;
  let callIndex = 0;
  for (const m of history) {
    if (m.is_demo === true) {
      demonstrations.push(m);
      continue;
    }
    const content = typeof m.content === "string" ? m.content : "";
    if (m.role === "system") {
      messages.push({ role: "system", content, agent: m.agent });
    } else if (m.role === "assistant") {
      const { action, thought } = actionOf(m);
      if (!action.trim()) {
        messages.push({ role: "assistant", content, agent: m.agent });
        continue;
      }
      const id = `action_${callIndex++}`;
      const name = action.trim().split(/\s+/)[0];
      // The reply's text is the thought and the command again: the thought is kept as reasoning, the command as the call.
      messages.push({ role: "assistant", content: null, thought: thought.trim() || undefined, agent: m.agent, tool_calls: [{ id, function: { name, arguments: { command: action } } }] });
      responses.push(content);
    } else if (m.role === "user" && !prompted) {
      prompted = true;
      messages.push({ role: "user", content, agent: m.agent });
    } else if (m.role === "user") {
      // After the task, a user message is what the environment answered to the last action.
      messages.push({ role: "tool", content, agent: m.agent });
    } else messages.push(m);
  }
  return { messages, demonstrations, responses };
}
