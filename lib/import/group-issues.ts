/**
 * Identical faults at many places read as one: "80 conversations: Missing required field 'messages'"
 * at `conversations[0..79]`, with `count`, instead of 80 rows a person has to scroll through. Issues
 * group when their message and suggestion are the same and their paths differ only in indexes.
 */
import type { ImportIssue } from "@/lib/schemas/imports";
import { faultKey } from "./issues";

const INDEX = /\[(\d+)\]/g;

/** `[0, 1, 2, 5]` → `0..2,5`; long lists, and lists of only some of the places (`more`), are cut. */
function ranges(values: number[], more = false): string {
  const sorted = [...new Set(values)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}..${sorted[j]}`);
    i = j;
  }
  return parts.length > 8 || more ? `${parts.slice(0, 8).join(",")},…` : parts.join(",");
}

/** What the varying index counts: the field before it (`conversations[`, `messages[`), or `lines` for JSON Lines. */
function nounOf(path: string, position: number): string {
  let seen = -1;
  let noun = "places";
  for (const m of path.matchAll(/([A-Za-z_$][\w$]*)?\[(\d+)\]/g)) {
    seen++;
    if (seen === position) {
      // A top-level array's elements are the file's records.
      noun = m[1] ?? "records";
      break;
    }
  }
  return noun;
}

export function groupIssues(issues: ImportIssue[]): ImportIssue[] {
  const groups = new Map<string, ImportIssue[]>();
  const order: string[] = [];
  for (const issue of issues) {
    // Capped lists end with a summary issue; it never groups with anything.
    const key = faultKey(issue);
    const group = groups.get(key);
    if (group) group.push(issue);
    else {
      groups.set(key, [issue]);
      order.push(key);
    }
  }
  return order.map((key) => {
    const group = groups.get(key) as ImportIssue[];
    if (group.length === 1) return group[0];
    const first = group[0];
    // An issue may stand for more than itself: IssueList counts a fault's issues past its keep limit on the last one kept.
    const total = group.reduce((n, i) => n + (i.count ?? 1), 0);
    const more = total > group.length;
    const indexes = group.map((i) => [...i.path.matchAll(INDEX)].map((m) => Number(m[1])));
    let position = 0;
    const path = first.path.replace(INDEX, () => {
      const values = indexes.map((list) => list[position]);
      const varying = values.some((v) => v !== values[0]);
      position++;
      return `[${varying ? ranges(values, more) : values[0]}]`;
    });
    const varyingAt = indexes[0].findIndex((_, p) => indexes.some((list) => list[p] !== indexes[0][p]));
    const lines = group.map((i) => i.line).filter((l): l is number => l !== undefined);
    const linesVary = lines.length === group.length && lines.some((l) => l !== lines[0]);
    const noun = varyingAt >= 0 ? nounOf(first.path, varyingAt) : linesVary ? "lines" : "places";
    const grouped: ImportIssue = {
      path: linesVary ? `${path} (lines ${ranges(lines, more)})` : path,
      message: `${total} ${noun}: ${first.message}`,
      suggestion: first.suggestion,
      count: total,
    };
    if (!linesVary && first.line !== undefined) grouped.line = first.line;
    if (first.column !== undefined && group.every((i) => i.column === first.column)) grouped.column = first.column;
    return grouped;
  });
}
