/**
 * Test helper for the real public files in ../shared/realdata (see its README.txt for sources and
 * licences; never copied into this repository): where they are, and how much of a file's text an
 * import kept — every string the file holds in its conversation parts (JSON text parsed), minus values
 * that name rather than say (roles, types, ids), looked up in what the API gives back.
 * Used by the route test (app/api/datasets/import/realdata.test.ts) and the page test (e2e/realdata-import.spec.ts).
 */
import fs from "node:fs";
import path from "node:path";

export const realdataDir = path.resolve(process.cwd(), "../shared/realdata");
export const realdataPresent = fs.existsSync(path.join(realdataDir, "README.txt"));
export const realdataAbsentMessage = `skipped: ${realdataDir} is absent (the real public files live there, never in this repository)`;
export const readRealdata = (name: string) => fs.readFileSync(path.join(realdataDir, name), "utf8");

/** A JSON Lines text as its records. */
export const jsonl = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

export type KeptStep = { thinking: string | null; tool_call: Record<string, unknown> | null; tool_result: unknown; output_content: string | null; agent_name: string | null };
export type KeptMessage = { role: string; content: string | null; meta: Record<string, unknown> | null; steps: KeptStep[] };
export type KeptConversation = { name: string | null; meta: Record<string, unknown> | null; agents: unknown; messages: KeptMessage[] };

/** Values that say which thing or what kind, not what was said. */
const structural = new Set(["role", "from", "type", "id", "tool_call_id", "tool_use_id", "call_id", "index", "signature", "message_type", "tool_call_ids"]);

function leaves(value: unknown, out: string[], depth = 0): void {
  if (depth > 64) return;
  if (typeof value === "string") {
    const t = value.trimStart();
    if (t.startsWith("{") || t.startsWith("[")) {
      try {
        return leaves(JSON.parse(value), out, depth + 1);
      } catch {
        // not JSON text: a string like any other
      }
    }
    if (value.trim()) out.push(value);
  } else if (Array.isArray(value)) for (const v of value) leaves(v, out, depth + 1);
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) if (!structural.has(k)) leaves(v, out, depth + 1);
}

/** Share of the file's text characters (in `fileParts`) found in what was stored. */
export function textKept(fileParts: unknown, conversations: KeptConversation[]): { ratio: number; total: number } {
  const stored: string[] = [];
  for (const c of conversations) {
    leaves(c.meta, stored);
    leaves(c.agents, stored);
    leaves(c.name, stored);
    for (const m of c.messages) {
      leaves(m.content, stored);
      leaves(m.meta, stored);
      for (const s of m.steps) leaves([s.thinking, s.tool_call, s.tool_result, s.output_content, s.agent_name], stored);
      // Stored objects also count as the JSON text they were read from.
      for (const s of m.steps) if (s.tool_result !== null && typeof s.tool_result === "object") stored.push(JSON.stringify(s.tool_result));
    }
  }
  const exact = new Set(stored);
  const joined = stored.join("\u0000");
  const inFile: string[] = [];
  leaves(fileParts, inFile);
  let total = 0;
  let kept = 0;
  for (const text of inFile) {
    total += text.length;
    if (exact.has(text) || joined.includes(text)) kept += text.length;
  }
  return { ratio: total ? kept / total : 1, total };
}

/** The parts of a Claude Code session log that hold the conversation: the `message` of its user and assistant lines. */
export const sessionMessageParts = (text: string) =>
  jsonl(text)
    .filter((r) => r.type === "user" || r.type === "assistant")
    .map((r) => r.message);

/** A real file that may be placed in ../shared/realdata by hand (published examples of the newer families): present or not. */
export const realdataHas = (name: string) => fs.existsSync(path.join(realdataDir, name));
export const realdataFileAbsent = (name: string) => `skipped: ${path.join(realdataDir, name)} is absent (a real published file, never copied into this repository)`;
