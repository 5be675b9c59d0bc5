/**
 * Why the stored counts differ from the file's: "1,863 records → 6 messages + 372 steps: …". Every
 * import outcome carries it, so a user who counts the lines of their file is never left guessing.
 */
import type { ImportRecords } from "@/lib/schemas/imports";
import { countText as n } from "../count-text";

/** What an adapter read: its records (and their name), those it skipped on purpose, and why its counts differ. */
export type RecordsRead = {
  inFile: number;
  /** What a record is in this format: `lines`, `events`, `tree messages`, … */
  unit: string;
  skipped: Record<string, number>;
  /** Reasons particular to the format, each a short clause. */
  reasons: string[];
};

/** The outcome's `records`: counts, skipped kinds and one sentence of explanation. */
export function summariseRecords(read: RecordsRead, stored: { conversations: number; messages: number; steps: number }): ImportRecords {
  const reasons = [...read.reasons];
  const skippedTotal = Object.values(read.skipped).reduce((a, b) => a + b, 0);
  if (skippedTotal) {
    const kinds = Object.entries(read.skipped)
      .sort((a, b) => b[1] - a[1])
      .map(([kind, count]) => `${n(count)} ${kind}`)
      .join(", ");
    reasons.push(`${n(skippedTotal)} records skipped as not part of the conversation (${kinds})`);
  }
  if (stored.steps && !reasons.some((r) => r.includes("steps"))) {
    reasons.push("tool calls, tool results and reasoning became steps of the assistant turn they belong to");
  }
  const head = `${n(read.inFile)} ${read.unit} → ${n(stored.conversations)} conversation${stored.conversations === 1 ? "" : "s"}, ${n(stored.messages)} messages + ${n(stored.steps)} steps`;
  return { in_file: read.inFile, skipped: read.skipped, explanation: reasons.length ? `${head}: ${reasons.join("; ")}` : head };
}
