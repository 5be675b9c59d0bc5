"use client";

import { useState } from "react";
import { cn } from "./cn";

/**
 * A JSON value as a collapsible tree of plain text. Strings are shown exactly as they are — never
 * parsed as HTML — because tool results and judge answers are untrusted content. Long values wrap
 * inside the box instead of running off its right edge; a folded object or array says how many
 * keys or items it holds, and so does an open one, on its first line.
 */
export function JsonView({ value, className, label }: { value: unknown; className?: string; label?: string }) {
  return (
    <div
      className={cn("min-w-0 max-w-full overflow-hidden rounded-md bg-slate-50 p-2 font-mono text-xs leading-5 text-slate-800 ring-1 ring-inset ring-slate-200", className)}
      aria-label={label}
      data-testid="json-view"
    >
      <Node value={value} depth={0} name={null} />
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="text-slate-400">null</span>;
  if (typeof value === "string") return <span className="whitespace-pre-wrap text-emerald-800 [overflow-wrap:anywhere]">{JSON.stringify(value)}</span>;
  if (typeof value === "number") return <span className="text-blue-700">{String(value)}</span>;
  if (typeof value === "boolean") return <span className="text-violet-700">{String(value)}</span>;
  return <span>{String(value)}</span>;
}

const countText = (n: number, isArray: boolean) => `${n} ${isArray ? (n === 1 ? "item" : "items") : n === 1 ? "key" : "keys"}`;

function Key({ name }: { name: string | null }) {
  return name === null ? null : <span className="text-slate-600 [overflow-wrap:anywhere]">{JSON.stringify(name)}: </span>;
}

function Node({ value, depth, name }: { value: unknown; depth: number; name: string | null }) {
  if (value === null || typeof value !== "object") {
    return (
      <div className="min-w-0 [overflow-wrap:anywhere]">
        <Key name={name} />
        <Scalar value={value} />
      </div>
    );
  }
  const isArray = Array.isArray(value);
  const entries: [string, unknown][] = isArray ? value.map((v, i) => [String(i), v]) : Object.entries(value as Record<string, unknown>);
  const [open, close] = isArray ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) {
    return (
      <div>
        <Key name={name} />
        <span>{open + close}</span>
      </div>
    );
  }
  return <Branch name={name} depth={depth} entries={entries} isArray={isArray} open={open} close={close} />;
}

/**
 * An object or array: its own open state, not a CSS `group-open` variant, decides whether the closing
 * bracket shows on the summary line (a nested tree's open ancestor would otherwise hide it there).
 */
function Branch({ name, depth, entries, isArray, open, close }: { name: string | null; depth: number; entries: [string, unknown][]; isArray: boolean; open: string; close: string }) {
  const [isOpen, setOpen] = useState(depth < 3);
  return (
    <details open={isOpen} onToggle={(e) => setOpen(e.currentTarget.open)} className="block min-w-0">
      <summary className="cursor-pointer list-none text-slate-500 hover:text-slate-800 [&::-webkit-details-marker]:hidden" data-testid="json-summary">
        <Key name={name} />
        {open}
        <span className="text-slate-400"> {countText(entries.length, isArray)}</span>
        {isOpen ? null : <span> {close}</span>}
      </summary>
      <div className="min-w-0 border-l border-slate-200 pl-4">
        {entries.map(([k, v]) => (
          <Node key={k} value={v} depth={depth + 1} name={isArray ? null : k} />
        ))}
      </div>
      <span className="text-slate-500">{close}</span>
    </details>
  );
}
