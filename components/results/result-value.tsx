import type { OutputType } from "@/lib/vocabulary";
import { cn } from "@/components/ui/cn";
import { formatScore, scoreOf, scoreTone, valueOf } from "./format";

const barTones = { bad: "bg-red-500", fair: "bg-amber-400", good: "bg-emerald-500" } as const;

/** A 0..1 score as a coloured bar with its number. */
export function ScoreBar({ score }: { score: number }) {
  const clamped = Math.max(0, Math.min(1, score));
  return (
    <span className="flex w-full min-w-0 items-center gap-2">
      <span className="h-1.5 flex-1 overflow-hidden rounded-full bg-slate-200" aria-hidden>
        <span className={cn("block h-full rounded-full", barTones[scoreTone(clamped)])} style={{ width: `${clamped * 100}%` }} />
      </span>
      <span className="w-9 shrink-0 text-right text-xs font-medium tabular-nums text-slate-700">{formatScore(score)}</span>
    </span>
  );
}

export function PassFail({ value }: { value: boolean }) {
  return value ? (
    <span className="inline-flex items-center gap-1 rounded-full bg-emerald-50 px-2 py-0.5 text-xs font-medium text-emerald-700 ring-1 ring-inset ring-emerald-200">
      <span aria-hidden>✓</span> Pass
    </span>
  ) : (
    <span className="inline-flex items-center gap-1 rounded-full bg-red-50 px-2 py-0.5 text-xs font-medium text-red-700 ring-1 ring-inset ring-red-200">
      <span aria-hidden>✗</span> Fail
    </span>
  );
}

/**
 * A completed result in one line, by output type. Everything is React text: a judge's answer can
 * contain anything, and is never turned into markup.
 */
export function ResultValue({ type, result }: { type: OutputType; result: unknown }) {
  const value = valueOf(result);
  switch (type) {
    case "progress": {
      const score = scoreOf(type, result);
      return score == null ? <Unreadable /> : <ScoreBar score={score} />;
    }
    case "checkbox":
      return typeof value === "boolean" ? <PassFail value={value} /> : <Unreadable />;
    case "number":
      return typeof value === "number" ? (
        <span className="font-medium tabular-nums text-slate-800">{formatScore(value)}</span>
      ) : (
        <Unreadable />
      );
    case "text":
      return <span className="block truncate text-slate-700">{typeof value === "string" ? value : JSON.stringify(result)}</span>;
    case "json": {
      const score = scoreOf(type, result);
      return (
        <span className="flex w-full min-w-0 items-center gap-2">
          {score == null ? null : score >= 0 && score <= 1 ? <ScoreBar score={score} /> : <span className="font-medium tabular-nums">{formatScore(score)}</span>}
          <span className="shrink-0 rounded bg-slate-100 px-1.5 font-mono text-[11px] text-slate-600">{"{…}"}</span>
        </span>
      );
    }
  }
}

function Unreadable() {
  return <span className="text-xs text-slate-400">unreadable result</span>;
}
