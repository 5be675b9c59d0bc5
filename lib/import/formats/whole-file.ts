/**
 * Formats recognised by the shape of the whole file rather than record by record: agent logs whose
 * records are not messages (session logs, event streams), message trees, trajectories stored twice
 * and eval logs holding samples. Each adapter is one file; this picks the first whose detector
 * accepts the parsed upload.
 */
import { isRecord } from "../issues";
import type { ParseResult } from "../parse";
import { convertAtifTrajectories, isAtifTrajectory } from "./atif";
import { convertCodexRollout, isCodexRollout } from "./codex-rollout";
import { convertCodingAgentSession, isCodingAgentSession } from "./coding-agent-session";
import { convertAgentEvents, eventsOf } from "./agent-events";
import { convertEvalLog, isEvalLog } from "./eval-log";
import type { Normalised } from "./normalised";
import { convertLangsmithRuns, isLangsmithRuns } from "./langsmith-runs";
import { convertMessageTrees, isMessageTreeFile } from "./message-tree";
import { convertTau2Results, isTau2Results } from "./tau2-results";
import { readSdkMessages, uiMessageLines } from "./sdk-messages";
import { convertSmolagentsMemory, isSmolagentsMemory, smolagentsStepLines } from "./smolagents-memory";
import { convertSmolagentsRuns, isSmolagentsRun } from "./smolagents-run";
import { convertSweAgentTrajectories, isTwiceStoredTrajectory } from "./swe-agent";

type Parsed = Extract<ParseResult, { ok: true }>;

/** The upload converted by a whole-file adapter, or undefined when none recognises it. */
export function normaliseWholeFile(parsed: Parsed): Normalised | undefined {
  if (parsed.kind === "jsonl") {
    if (isCodexRollout(parsed.lines)) return convertCodexRollout(parsed.lines);
    if (isCodingAgentSession(parsed.lines)) return convertCodingAgentSession(parsed.lines);
    const units = parsed.lines.map((l) => ({ value: l.value, line: l.line, path: "" }));
    // ATIF trajectories, one per line (what the ATIF export of a dataset writes).
    if (units.length && units.every((u) => isAtifTrajectory(u.value))) return convertAtifTrajectories(units as Parameters<typeof convertAtifTrajectories>[0]);
    // LangSmith runs, one per line: a child's line names its parent, so the file is read as one list.
    const runs = [{ value: parsed.lines.map((l) => l.value), path: "" }];
    if (isLangsmithRuns(runs)) return convertLangsmithRuns(runs);
    if (isMessageTreeFile(units)) return convertMessageTrees(units);
    if (isSmolagentsRun(units)) return convertSmolagentsRuns(units);
    const memory = smolagentsStepLines(units) ?? units;
    if (isSmolagentsMemory(memory)) return convertSmolagentsMemory(memory);
    if (units.every((u) => isTwiceStoredTrajectory(u.value))) return convertSweAgentTrajectories(units as Parameters<typeof convertSweAgentTrajectories>[0]);
    const sdk = readSdkMessages(uiMessageLines(units) ?? units);
    if (sdk) return sdk;
    // JSON Lines of events: one run.
    const events = eventsOf(parsed.lines.map((l) => l.value));
    if (events) return convertAgentEvents([{ value: events, events, path: "" }]);
    // OpenHands evaluation output: one run per line, each with its `history` of events.
    if (units.every((u) => isRecord(u.value) && eventsOf(u.value))) {
      return convertAgentEvents(units.map((u) => ({ value: u.value, events: eventsOf(u.value) as Record<string, unknown>[], path: "", line: u.line })));
    }
    return undefined;
  }
  if (parsed.kind !== "json") return undefined;
  const root = parsed.value;
  if (isAtifTrajectory(root)) return convertAtifTrajectories([{ value: root, path: "" }]);
  if (Array.isArray(root) && root.length && root.every(isAtifTrajectory)) return convertAtifTrajectories(root.map((value, i) => ({ value: value as Record<string, unknown>, path: `[${i}]` })));
  if (isEvalLog(root)) return convertEvalLog(root);
  if (isTau2Results(root)) return convertTau2Results(root);
  if (isLangsmithRuns([{ value: root, path: "" }])) return convertLangsmithRuns([{ value: root, path: "" }]);
  const events = eventsOf(root);
  if (events) return convertAgentEvents([{ value: root, events, path: Array.isArray(root) ? "" : "events" }]);
  // Several runs: a list of event lists, or of {events} records.
  if (Array.isArray(root) && root.length && root.every((r) => eventsOf(r))) {
    return convertAgentEvents(root.map((r, i) => ({ value: r, events: eventsOf(r) as Record<string, unknown>[], path: `[${i}]` })));
  }
  const units = Array.isArray(root) ? root.map((value, i) => ({ value, path: `[${i}]` })) : [{ value: root, path: "" }];
  if (isMessageTreeFile(units)) return convertMessageTrees(units);
  if (isSmolagentsRun(units)) return convertSmolagentsRuns(units);
  // smolagents memory steps: the file is one run (a step list, or a record holding one), or a list of runs.
  if (isSmolagentsMemory([{ value: root, path: "" }])) return convertSmolagentsMemory([{ value: root, path: "" }]);
  if (isSmolagentsMemory(units)) return convertSmolagentsMemory(units);
  if (units.length && units.every((u) => isTwiceStoredTrajectory(u.value))) return convertSweAgentTrajectories(units as Parameters<typeof convertSweAgentTrajectories>[0]);
  // AI SDK UI messages, OpenAI Responses items, Gemini contents: the file is one conversation, or a list of them.
  return readSdkMessages([{ value: root, path: "" }]) ?? (Array.isArray(root) ? readSdkMessages(units) : undefined);
}
