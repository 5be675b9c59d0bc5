/**
 * SWE-agent trajectories (`.traj`): one run stored twice, as `history` (chat messages with `agent`,
 * `message_type`, `thought`, `action`, `tool_calls`, tool replies naming `tool_call_ids`) and as
 * `trajectory` (steps `{thought, action, observation, response, execution_time, state}`). The run is
 * imported once, from `history`: the model's calls become tool_call steps carrying the `action`
 * command line, every step names its agent. What only `trajectory` holds (each step's
 * `execution_time` and `state`) goes to the conversation's meta as `trajectory_steps`; `info`
 * (`exit_status`, `submission`, `model_stats`, …), `environment` and `replay_config` are meta too.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import { isMessageLike } from "./records";
import type { ConversationSource } from "./source-paths";
import { isLegacyHistory, legacyMessages } from "./swe-agent-legacy";
import { convertMessages, toolsAsAgents } from "./turns";

type Rec = Record<string, unknown>;

/** Fields of a trajectory step that `history` holds too. */
const inHistory = new Set(["thought", "action", "observation", "response", "messages", "query"]);

/** True when the record holds the run twice: a message `history` and a step `trajectory`. */
export function isTwiceStoredTrajectory(value: unknown): value is Rec {
  return (
    isRecord(value) &&
    Array.isArray(value.history) &&
    value.history.length > 0 &&
    value.history.every(isMessageLike) &&
    Array.isArray(value.trajectory) &&
    value.trajectory.every((s) => isRecord(s) && ("action" in s || "observation" in s))
  );
}

/** Convert one or several twice-stored trajectories (one conversation each). */
export function convertSweAgentTrajectories(units: Array<{ value: Rec; path: string; line?: number }>): Normalised {
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  let historyMessages = 0;
  let trajectorySteps = 0;
  let demonstrations = 0;
  for (const { value, path, line } of units) {
    const history = value.history as unknown[];
    const trajectory = value.trajectory as Rec[];
    historyMessages += history.length;
    trajectorySteps += trajectory.length;
    // Before 1.0 the actions are free text and observations come back as user messages (swe-agent-legacy.ts).
    const legacy = isLegacyHistory(history) ? legacyMessages(history as Rec[]) : undefined;
    if (legacy?.demonstrations.length) demonstrations += legacy.demonstrations.length;
    const converted = convertMessages(legacy ? legacy.messages : history);
    const meta: Rec = {};
    for (const [k, v] of Object.entries(value)) if (k !== "history" && k !== "trajectory" && k !== "tools") meta[k] = v;
    if (legacy?.demonstrations.length) meta.demonstrations = legacy.demonstrations;
    if (legacy?.responses.length) meta.model_responses = legacy.responses;
    meta.trajectory_steps = trajectory.map((s) => Object.fromEntries(Object.entries(s).filter(([k]) => !inHistory.has(k))));
    const agents = [...new Set(history.map((m) => (isRecord(m) && typeof m.agent === "string" ? m.agent : undefined)).filter(Boolean))];
    if (agents.length) meta.agents = agents;
    const conversation: Rec = { name: typeof value.instance_id === "string" ? value.instance_id : undefined, meta, messages: converted.messages };
    const declared = toolsAsAgents(value.tools);
    if (declared) conversation.agents = declared;
    conversations.push(conversation);
    sources.push({ path, messagesPath: path ? `${path}.history` : "history", line, rawMessages: [...history, ...trajectory, { ...meta, trajectory_steps: undefined }], wholeConversation: true });
  }
  return {
    format: "swe_agent_trajectory",
    data: { conversations },
    sources,
    structural: ["message_type", "tool_call_ids"],
    records: {
      inFile: historyMessages + trajectorySteps,
      unit: "records (history messages + trajectory steps)",
      skipped: demonstrations ? { "demonstration (kept in meta, not a turn)": demonstrations } : {},
      reasons: [
        `the run is stored twice, as ${historyMessages} history messages and ${trajectorySteps} trajectory steps: it is imported once, from history; what only the trajectory holds (execution_time, state) is in the conversation's meta as trajectory_steps`,
        "the agent's consecutive actions and their tool replies are one assistant turn, its calls and results steps",
      ],
    },
  };
}
