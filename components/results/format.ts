/** Reading judge results by output type (shared/API.md "IndividualResult"), for display only. */
import type { OutputType } from "@/lib/vocabulary";

function record(value: unknown): Record<string, unknown> | null {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** The numeric score the aggregates use: progress score, checkbox 1/0, number value, json `score`. */
export function scoreOf(type: OutputType, result: unknown): number | null {
  const r = record(result);
  if (!r) return null;
  if (type === "progress" || type === "json") return typeof r.score === "number" ? r.score : null;
  if (type === "checkbox") return typeof r.value === "boolean" ? (r.value ? 1 : 0) : null;
  if (type === "number") return typeof r.value === "number" ? r.value : null;
  return null;
}

export function reasoningOf(result: unknown): string | null {
  const r = record(result);
  return r && typeof r.reasoning === "string" && r.reasoning.trim() ? r.reasoning : null;
}

export function valueOf(result: unknown): unknown {
  return record(result)?.value;
}

/** Scores 0..1 go red → amber → green; used by score bars and charts alike. */
export function scoreTone(score: number): "bad" | "fair" | "good" {
  return score < 0.4 ? "bad" : score < 0.7 ? "fair" : "good";
}

export function formatScore(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(Math.abs(n) < 10 ? 2 : 1);
}

export function formatDuration(ms: number | null): string {
  if (ms == null) return "—";
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s % 60)} s`;
}

export function formatDateTime(iso: string | null): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

export function formatTokens(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : n.toLocaleString();
}
