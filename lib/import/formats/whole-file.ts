/**
 * Formats recognised by the shape of the whole file rather than record by record: agent logs whose
 * records are not messages (session logs, event streams), message trees, trajectories stored twice
 * and eval logs holding samples. Each adapter is one file; this is their registry: one reader a format
 * (or a family the adapter tells apart itself), each giving the file converted or nothing.
 *
 * Which reader comes first decides nothing for any file we know: whole-file.test.ts reads every real
 * file and fixture with every reader and fails when two read one file (two adapters claiming the same
 * shape must be told apart by their detectors, not by their place here).
 */
import type { ImportFormat } from "@/lib/schemas/imports";
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
type Unit = { value: unknown; path: string; line?: number };

/** One whole-file adapter: the formats it may name, and the upload converted, or undefined when the file is not its shape. */
export type WholeFileReader = { name: string; formats: readonly ImportFormat[]; read(parsed: Parsed): Normalised | undefined };

const jsonlUnits = (parsed: Parsed): Unit[] => (parsed.kind === "jsonl" ? parsed.lines.map((l) => ({ value: l.value, line: l.line, path: "" })) : []);
/** A JSON file's records: its elements when it is a list, else the file as one record. */
const jsonUnits = (root: unknown): Unit[] => (Array.isArray(root) ? root.map((value, i) => ({ value, path: `[${i}]` })) : [{ value: root, path: "" }]);
const atifUnits = (units: Unit[]) => units as Parameters<typeof convertAtifTrajectories>[0];
const sweUnits = (units: Unit[]) => units as Parameters<typeof convertSweAgentTrajectories>[0];

/** The registry: every whole-file adapter, each reading JSON Lines, JSON, or both. */
export const wholeFileReaders: readonly WholeFileReader[] = [
  { name: "codex_rollout", formats: ["codex_rollout"], read: (p) => (p.kind === "jsonl" && isCodexRollout(p.lines) ? convertCodexRollout(p.lines) : undefined) },
  {
    name: "coding_agent_session",
    formats: ["coding_agent_session"],
    read: (p) => (p.kind === "jsonl" && isCodingAgentSession(p.lines) ? convertCodingAgentSession(p.lines) : undefined),
  },
  {
    // ATIF trajectories: one per line (what the ATIF export of a dataset writes), one file, or a list of them.
    name: "atif",
    formats: ["atif"],
    read: (p) => {
      if (p.kind === "jsonl") {
        const units = jsonlUnits(p);
        return units.length && units.every((u) => isAtifTrajectory(u.value)) ? convertAtifTrajectories(atifUnits(units)) : undefined;
      }
      const root = p.kind === "json" ? p.value : undefined;
      if (isAtifTrajectory(root)) return convertAtifTrajectories([{ value: root, path: "" }]);
      if (Array.isArray(root) && root.length && root.every(isAtifTrajectory)) return convertAtifTrajectories(atifUnits(jsonUnits(root)));
      return undefined;
    },
  },
  {
    // LangSmith runs: a child's line names its parent, so a JSON Lines file is read as one list.
    name: "langsmith_runs",
    formats: ["langsmith_runs"],
    read: (p) => {
      const runs = p.kind === "jsonl" ? [{ value: p.lines.map((l) => l.value), path: "" }] : p.kind === "json" ? [{ value: p.value, path: "" }] : [];
      return runs.length && isLangsmithRuns(runs) ? convertLangsmithRuns(runs) : undefined;
    },
  },
  { name: "eval_log", formats: ["eval_log"], read: (p) => (p.kind === "json" && isEvalLog(p.value) ? convertEvalLog(p.value) : undefined) },
  { name: "tau2_results", formats: ["tau2_results"], read: (p) => (p.kind === "json" && isTau2Results(p.value) ? convertTau2Results(p.value) : undefined) },
  {
    name: "message_tree",
    formats: ["message_tree"],
    read: (p) => {
      const units = p.kind === "jsonl" ? jsonlUnits(p) : p.kind === "json" ? jsonUnits(p.value) : [];
      return units.length && isMessageTreeFile(units) ? convertMessageTrees(units) : undefined;
    },
  },
  {
    name: "smolagents_run",
    formats: ["smolagents_run"],
    read: (p) => {
      const units = p.kind === "jsonl" ? jsonlUnits(p) : p.kind === "json" ? jsonUnits(p.value) : [];
      return units.length && isSmolagentsRun(units) ? convertSmolagentsRuns(units) : undefined;
    },
  },
  {
    // smolagents memory steps: the file is one run (a step list, or a record holding one), or a list of runs.
    name: "smolagents_memory",
    formats: ["smolagents_memory"],
    read: (p) => {
      if (p.kind === "jsonl") {
        const units = jsonlUnits(p);
        const memory = smolagentsStepLines(units) ?? units;
        return isSmolagentsMemory(memory) ? convertSmolagentsMemory(memory) : undefined;
      }
      if (p.kind !== "json") return undefined;
      const whole = [{ value: p.value, path: "" }];
      if (isSmolagentsMemory(whole)) return convertSmolagentsMemory(whole);
      const units = jsonUnits(p.value);
      return isSmolagentsMemory(units) ? convertSmolagentsMemory(units) : undefined;
    },
  },
  {
    name: "swe_agent_trajectory",
    formats: ["swe_agent_trajectory"],
    read: (p) => {
      const units = p.kind === "jsonl" ? jsonlUnits(p) : p.kind === "json" ? jsonUnits(p.value) : [];
      return units.length && units.every((u) => isTwiceStoredTrajectory(u.value)) ? convertSweAgentTrajectories(sweUnits(units)) : undefined;
    },
  },
  {
    // AI SDK UI messages, OpenAI Responses items, Gemini contents: the file is one conversation, or a list of them.
    name: "sdk_messages",
    formats: ["ai_sdk_ui_messages", "openai_responses", "gemini_contents"],
    read: (p) => {
      if (p.kind === "jsonl") {
        const units = jsonlUnits(p);
        return readSdkMessages(uiMessageLines(units) ?? units);
      }
      if (p.kind !== "json") return undefined;
      return readSdkMessages([{ value: p.value, path: "" }]) ?? (Array.isArray(p.value) ? readSdkMessages(jsonUnits(p.value)) : undefined);
    },
  },
  {
    // Agent events: JSON Lines of events (one run), OpenHands evaluation output (one run per line, each with
    // its `history`), an event list or a record holding one, or several runs (a list of event lists or of {events} records).
    name: "agent_events",
    formats: ["agent_events"],
    read: (p) => {
      if (p.kind === "jsonl") {
        const events = eventsOf(p.lines.map((l) => l.value));
        if (events) return convertAgentEvents([{ value: events, events, path: "" }]);
        const units = jsonlUnits(p);
        if (!units.every((u) => isRecord(u.value) && eventsOf(u.value))) return undefined;
        return convertAgentEvents(units.map((u) => ({ value: u.value, events: eventsOf(u.value) as Record<string, unknown>[], path: "", line: u.line })));
      }
      if (p.kind !== "json") return undefined;
      const root = p.value;
      const events = eventsOf(root);
      if (events) return convertAgentEvents([{ value: root, events, path: Array.isArray(root) ? "" : "events" }]);
      if (!(Array.isArray(root) && root.length && root.every((r) => eventsOf(r)))) return undefined;
      return convertAgentEvents(root.map((r, i) => ({ value: r, events: eventsOf(r) as Record<string, unknown>[], path: `[${i}]` })));
    },
  },
];

/** The upload converted by a whole-file adapter, or undefined when none recognises it. */
export function normaliseWholeFile(parsed: Parsed): Normalised | undefined {
  if (parsed.kind !== "json" && parsed.kind !== "jsonl") return undefined;
  for (const reader of wholeFileReaders) {
    const read = reader.read(parsed);
    if (read) return read;
  }
  return undefined;
}

/** Every reader that reads the upload (the test that no two claim one file). */
export function wholeFileClaimants(parsed: Parsed): string[] {
  return wholeFileReaders.filter((reader) => reader.read(parsed) !== undefined).map((reader) => reader.name);
}
