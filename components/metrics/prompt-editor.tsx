"use client";

import { useId, useLayoutEffect, useRef, useState, type KeyboardEvent } from "react";
import { Badge } from "@/components/ui/badge";
import type { EvaluationLevel, OutputType } from "@/lib/vocabulary";
import { checkPromptVariables, describeVariable, explainInvalidVariable, pairwiseVariables, variablesForLevel } from "@/lib/metrics/variables";
import { defaultContextHints, levelLabels } from "./labels";

/** The `@partial` being typed just before the caret, if any (same boundary rule as extraction). */
function tokenBeforeCaret(text: string, caret: number): { start: number; text: string } | null {
  const match = /(?:^|[^\p{L}\p{N}_.+\-@])(@[A-Za-z0-9_.]*)$/u.exec(text.slice(0, caret));
  return match ? { start: caret - match[1].length, text: match[1] } : null;
}

/**
 * The prompt textarea: typing `@` offers the level's variables (arrows + Enter/Tab, or click), and the
 * variables in use are checked live against the level with the server's own rules.
 */
export function PromptEditor({
  id,
  value,
  onChange,
  level,
  outputType,
  error,
}: {
  id: string;
  value: string;
  onChange: (next: string) => void;
  level: EvaluationLevel;
  /** A pairwise metric offers @CANDIDATE_A/B beside the conversation-level variables. */
  outputType?: OutputType;
  error?: string;
}) {
  const ref = useRef<HTMLTextAreaElement>(null);
  const listId = useId();
  const [token, setToken] = useState<{ start: number; text: string } | null>(null);
  const [active, setActive] = useState(0);
  /**
   * Where the caret goes once an inserted variable is on the page: set when React has put the new value
   * in the textarea, before the next key is handled. (Set on the next animation frame instead, a key typed
   * in between — a fast typist, a busy machine — was followed by the caret jumping back into the text.)
   */
  const pendingCaret = useRef<number | null>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    const caret = pendingCaret.current;
    if (!el || caret === null || el.value !== value) return;
    pendingCaret.current = null;
    el.setSelectionRange(caret, caret);
  }, [value]);
  const available = outputType === "pairwise" ? [...variablesForLevel("conversation"), ...pairwiseVariables] : variablesForLevel(level);
  const options = token ? available.filter((v) => v.toLowerCase().startsWith(token.text.toLowerCase())) : [];
  const open = options.length > 0;
  const check = checkPromptVariables(value, level, outputType);

  function refreshToken(el: HTMLTextAreaElement) {
    const next = el.selectionStart === el.selectionEnd ? tokenBeforeCaret(el.value, el.selectionStart) : null;
    setToken(next);
    setActive(0);
  }

  function insert(name: string) {
    const el = ref.current;
    if (!el) return;
    const start = token?.start ?? el.selectionStart;
    const end = el.selectionStart;
    const next = value.slice(0, start) + name + value.slice(end);
    const caret = start + name.length;
    el.focus();
    if (next === value) el.setSelectionRange(caret, caret);
    else pendingCaret.current = caret;
    onChange(next);
    setToken(null);
  }

  function onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (!open) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : -1;
      setActive((a) => (a + step + options.length) % options.length);
    } else if (e.key === "Enter" || e.key === "Tab") {
      e.preventDefault();
      insert(options[Math.min(active, options.length - 1)]);
    } else if (e.key === "Escape") {
      e.preventDefault();
      setToken(null);
    }
  }

  const describedBy = [`${id}-variables`, error ? `${id}-error` : null].filter(Boolean).join(" ");

  return (
    <div className="space-y-2">
      <div className="relative">
        <textarea
          ref={ref}
          id={id}
          name="prompt"
          value={value}
          rows={12}
          spellCheck={false}
          className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 font-mono text-[13px] leading-relaxed shadow-sm placeholder:text-slate-400 focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-100 aria-[invalid=true]:border-red-500"
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={open}
          aria-controls={listId}
          aria-activedescendant={open ? `${listId}-${active}` : undefined}
          aria-invalid={check.invalid.length > 0 || !!error}
          aria-describedby={describedBy}
          placeholder={`Describe what the judge should check. Type @ to insert a variable, e.g. ${available[0]}.`}
          onChange={(e) => {
            onChange(e.target.value);
            refreshToken(e.target);
          }}
          onKeyDown={onKeyDown}
          onClick={(e) => refreshToken(e.currentTarget)}
          onBlur={() => setToken(null)}
        />
        {open ? (
          <ul
            id={listId}
            role="listbox"
            aria-label="Template variables"
            className="absolute inset-x-2 top-full z-20 mt-1 max-h-64 overflow-auto rounded-md border border-slate-200 bg-white py-1 text-sm shadow-lg"
          >
            {options.map((name, i) => (
              <li
                key={name}
                id={`${listId}-${i}`}
                role="option"
                aria-selected={i === active}
                className={`cursor-pointer px-3 py-1.5 ${i === active ? "bg-brand-50" : "hover:bg-slate-50"}`}
                // mousedown, not click: the textarea must keep focus and its caret.
                onMouseDown={(e) => {
                  e.preventDefault();
                  insert(name);
                }}
                onMouseEnter={() => setActive(i)}
              >
                <span className="font-mono text-slate-900">{name}</span>
                <span className="ml-2 text-xs text-slate-500">{describeVariable(name)?.description}</span>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <div id={`${id}-variables`} className="space-y-1.5 text-sm" aria-live="polite">
        {check.variables.length === 0 ? (
          <p className="text-slate-500">
            Basic mode: no variables, so the judge also gets {defaultContextHints[level]}.
          </p>
        ) : (
          <div className="flex flex-wrap items-center gap-1.5">
            <span className="text-slate-500">Variables:</span>
            {check.variables.map((v) => (
              <Badge key={v} tone={check.invalid.includes(v) ? "danger" : "success"}>
                <span className="font-mono">{v}</span>
              </Badge>
            ))}
          </div>
        )}
        {check.invalid.length ? (
          <div role="alert" className="rounded-md bg-red-50 px-3 py-2 text-red-700">
            <ul className="list-inside list-disc">
              {check.invalid.map((v) => (
                <li key={v}>{explainInvalidVariable(v, level, outputType)}</li>
              ))}
            </ul>
            <p className="mt-1 text-xs">
              Valid at the {levelLabels[level].toLowerCase()} level: <span className="font-mono">{available.join(", ")}</span>
            </p>
          </div>
        ) : null}
        {error ? (
          <p id={`${id}-error`} role="alert" className="text-red-600">
            {error}
          </p>
        ) : null}
      </div>
    </div>
  );
}
