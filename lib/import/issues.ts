/** Collecting errors and warnings with the cap of API.md (200 distinct faults per stage, then one summary issue). */
import type { ImportIssue } from "@/lib/schemas/imports";
import { isRecord } from "@/lib/vocabulary";

export const MAX_ISSUES = 200;

/** Issues kept per fault: enough for the ranges a grouped issue names; the rest are only counted. */
const MAX_PER_FAULT = 1000;

/** What makes issues the same fault: message, suggestion and path up to its indexes (see group-issues.ts). */
export function faultKey(issue: ImportIssue): string {
  return `${issue.message}\u0000${issue.suggestion}\u0000${issue.path.replace(/\[\d+\]/g, "[]")}`;
}

/**
 * A list that keeps the issues of the first MAX_ISSUES distinct faults and counts the rest. The cap is
 * on faults, not issues, so one fault repeated 250 times is grouped later as "250 …", not cut at 200.
 * Issues stay individual here: their paths are mapped into the uploaded file before they are grouped.
 */
export class IssueList {
  private readonly faults = new Map<string, { items: ImportIssue[]; overflow: number }>();
  private dropped = 0;
  private total = 0;

  add(issue: ImportIssue): void {
    this.total++;
    const key = faultKey(issue);
    const fault = this.faults.get(key);
    if (fault) {
      if (fault.items.length < MAX_PER_FAULT) fault.items.push(issue);
      else fault.overflow++;
    } else if (this.faults.size < MAX_ISSUES) this.faults.set(key, { items: [issue], overflow: 0 });
    else this.dropped++;
  }

  get count(): number {
    return this.total;
  }

  /** The issues, with a closing one saying how many more there were when the cap was hit. */
  toArray(kind: "errors" | "warnings"): ImportIssue[] {
    const out: ImportIssue[] = [];
    for (const { items, overflow } of this.faults.values()) {
      out.push(...items);
      // The issues past MAX_PER_FAULT ride on the last one kept, so the group's count stays exact.
      if (overflow) out[out.length - 1] = { ...items[items.length - 1], count: 1 + overflow };
    }
    if (!this.dropped) return out;
    out.push({
      path: "(file)",
      message: `…and ${this.dropped} more ${kind} of other kinds (only the first ${MAX_ISSUES} kinds are listed)`,
      suggestion: `Fix the ${kind} above and upload again to see the rest`,
    });
    return out;
  }
}

/** `conversations[0].messages[2]` + `role` → `conversations[0].messages[2].role`. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  const safe = /^[A-Za-z_$][\w$]*$/.test(key) ? clip(key, 200) : JSON.stringify(clip(key, 200));
  return base ? `${base}.${safe}` : safe;
}

/** Re-exported for this module's readers (one definition: lib/vocabulary.ts). */
export { isRecord };

/** The JSON type name of a value, as error messages say it. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Text from the file, cut short so one huge value cannot bloat a response. */
export function clip(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A value shortened for a message: strings quoted, long text cut. */
export function preview(value: unknown, max = 40): string {
  let text: string;
  try {
    text = typeof value === "string" ? `'${value}'` : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const units = ["B", "KB", "MB", "GB"];

/** 52428800 → `50.0 MB`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}
