/** Collecting errors and warnings with the cap of API.md (200 per stage, then one summary issue). */
import type { ImportIssue } from "@/lib/schemas/imports";

export const MAX_ISSUES = 200;

/** A list that keeps the first MAX_ISSUES issues and counts the rest. */
export class IssueList {
  private readonly items: ImportIssue[] = [];
  private dropped = 0;

  add(issue: ImportIssue): void {
    if (this.items.length < MAX_ISSUES) this.items.push(issue);
    else this.dropped++;
  }

  get count(): number {
    return this.items.length + this.dropped;
  }

  /** The issues, with a closing one saying how many more there were when the cap was hit. */
  toArray(kind: "errors" | "warnings"): ImportIssue[] {
    if (!this.dropped) return [...this.items];
    return [
      ...this.items,
      {
        path: "(file)",
        message: `…and ${this.dropped} more ${kind} (only the first ${MAX_ISSUES} are listed)`,
        suggestion: `Fix the ${kind} above and upload again to see the rest`,
      },
    ];
  }
}

/** `conversations[0].messages[2]` + `role` → `conversations[0].messages[2].role`. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  const safe = /^[A-Za-z_$][\w$]*$/.test(key) ? clip(key, 200) : JSON.stringify(clip(key, 200));
  return base ? `${base}.${safe}` : safe;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

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
