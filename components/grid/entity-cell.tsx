"use client";

import { useAccess } from "@/components/caller-context";
import { cn } from "@/components/ui/cn";
import type { GridRow } from "@/lib/schemas/executions";
import { useGridActions, useRowState } from "./grid-context";
import { levelNames, levelShortNames, levelTones } from "./labels";

const iconButton =
  "inline-flex h-7 shrink-0 items-center justify-center rounded px-1.5 text-xs font-medium text-slate-500 hover:bg-slate-200 hover:text-slate-900 disabled:cursor-not-allowed disabled:text-slate-300 disabled:hover:bg-transparent";

/** The first column: expander, level, label, and the row's own actions (run the row, open it). */
export function EntityCell({ row, depth, expandable, index }: { row: GridRow; depth: 0 | 1 | 2; expandable: boolean; index: number }) {
  const actions = useGridActions();
  const access = useAccess("annotator");
  const { expanded } = useRowState();
  const isOpen = expandable && expanded.has(row.entity_id);
  return (
    <div className="flex h-full min-w-0 items-center gap-1.5 pr-2" style={{ paddingLeft: 8 + depth * 20 }}>
      {expandable ? (
        <button
          type="button"
          className={cn(iconButton, "w-7")}
          aria-expanded={isOpen}
          aria-label={`${isOpen ? "Collapse" : "Expand"} ${row.label}`}
          onClick={(e) => {
            e.stopPropagation();
            actions.toggleExpanded(row.entity_id);
          }}
        >
          <span aria-hidden className={cn("transition-transform", isOpen && "rotate-90")}>
            ▶
          </span>
        </button>
      ) : (
        <span className="w-3 shrink-0" aria-hidden />
      )}
      {depth === 0 ? <span className="w-10 shrink-0 text-right text-xs tabular-nums text-slate-400">{index + 1}</span> : null}
      <span
        className={cn("shrink-0 rounded px-1.5 py-px text-[10px] font-semibold uppercase tracking-wide ring-1 ring-inset", levelTones[row.entity_type])}
        data-testid="row-level"
        title={levelNames[row.entity_type]}
      >
        {levelShortNames[row.entity_type]}
      </span>
      <span className={cn("flex min-w-0 flex-1", depth === 0 ? "font-medium text-slate-900" : "text-slate-700", row.entity_type === "step" && "font-mono text-xs")} title={row.label}>
        <span className="min-w-0 truncate">{labelParts(row.label).head}</span>
        {/* The end that tells sibling paths apart ("(path 2/3)") stays visible when the rest is cut. */}
        {labelParts(row.label).tail ? <span className="shrink-0 whitespace-pre text-slate-500">{labelParts(row.label).tail}</span> : null}
      </span>
      {/* Shown on hover or keyboard focus only, so that labels keep the room the rest of the time. */}
      <span className="hidden shrink-0 items-center gap-0.5 group-hover/row:flex group-focus-within/row:flex">
        <button
          type="button"
          className={iconButton}
          aria-label={`Run every metric on ${row.label}`}
          disabled={!access.allowed}
          title={access.why ?? "Run every metric on this row"}
          onClick={(e) => {
            e.stopPropagation();
            actions.runRow(row);
          }}
        >
          ▶ Row
        </button>
        <button
          type="button"
          className={iconButton}
          aria-label={`Open ${row.label}`}
          title="Open the conversation"
          onClick={(e) => {
            e.stopPropagation();
            actions.openRow(row);
          }}
        >
          Open ›
        </button>
      </span>
    </div>
  );
}

/** A label's last parenthesised part (an Open Assistant path, a repeat), kept whole when the label is cut. */
function labelParts(label: string): { head: string; tail: string | null } {
  const m = /^(.*\S)( \([^()]{1,24}\))$/.exec(label);
  return m ? { head: m[1], tail: m[2] } : { head: label, tail: null };
}
