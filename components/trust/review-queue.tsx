"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { useAccess, useCaller } from "@/components/caller-context";
import { MessageView } from "@/components/conversation/message-view";
import { levelNames, outputTypeNames } from "@/components/grid/labels";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { Select } from "@/components/ui/select";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Conversation } from "@/lib/schemas/datasets";
import type { GridRow } from "@/lib/schemas/executions";
import type { Agreement, Label } from "@/lib/schemas/labels";
import type { Metric } from "@/lib/schemas/metrics";
import type { ReferencePreview } from "@/lib/schemas/references";

/** How many rows of a level the queue walks through: the grid's largest page. */
const QUEUE_ROWS = 500;

type StatusFilter = "all" | "completed" | "failed" | "none";
type Filters = { metricId: number; status: StatusFilter; disagree: boolean; unlabelled: boolean };

const cellKey = (row: Pick<GridRow, "entity_type" | "entity_id">) => `${row.entity_type}:${row.entity_id}`;

const isTyping = (el: Element | null) =>
  el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement || (el as HTMLElement | null)?.isContentEditable === true;

/** The label value `p` / `f` give: pass/fail on a checkbox metric, 1 / 0 on a score metric; null where it means nothing. */
export function passFailValue(metric: Pick<Metric, "output_type">, pass: boolean): boolean | number | null {
  if (metric.output_type === "checkbox") return pass;
  if (metric.output_type === "progress" || metric.output_type === "number") return pass ? 1 : 0;
  return null;
}

/** Why `p` / `f` do nothing on a metric, shown beside the label buttons. */
function passFailWhyNot(metric: Pick<Metric, "output_type">): string | null {
  if (metric.output_type === "text") return "p / f do not apply: a text metric is labelled with a category (not from the keyboard).";
  if (metric.output_type === "json") return "p / f do not apply: a JSON metric's label is an object (not from the keyboard).";
  return null;
}

/** The label value a score key (1–5) gives: a point on the progress scale, or the number itself. */
function scoreValue(metric: Metric, key: number): number | null {
  if (metric.output_type === "progress") return (key - 1) / 4;
  if (metric.output_type === "number") return key;
  return null;
}

function formatValue(value: unknown): string {
  if (value === true) return "pass";
  if (value === false) return "fail";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(2);
  if (value === null || value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The judge's verdict of a cell (value or score) and its reasoning. */
function verdictOf(cell: GridRow["cells"][string] | undefined): { verdict: string; reasoning: string | null; failed: boolean } | null {
  if (!cell) return null;
  if (cell.status === "failed") return { verdict: "error", reasoning: cell.error, failed: true };
  const r = (cell.result ?? {}) as { value?: unknown; score?: unknown; reasoning?: unknown };
  const verdict = r.value !== undefined ? formatValue(r.value) : formatValue(r.score);
  return { verdict, reasoning: typeof r.reasoning === "string" ? r.reasoning : null, failed: false };
}

const help: Array<[string, string]> = [
  ["j / k", "next / previous cell"],
  ["p / f", "label pass / fail (checkbox); 1 / 0 on score metrics"],
  ["1 – 5", "label a score (progress: 0, 0.25 … 1; number: the digit)"],
  ["n", "write a note (Enter saves, Esc leaves)"],
  ["?", "show or hide this help (Esc hides it)"],
];

/**
 * The review queue: one cell after another of a metric, the conversation beside the judge's verdict and
 * reasoning, labelled from the keyboard. The caller's own label is "your label" (and what counts as labelled
 * here); other people's current labels are shown apart, by name. The queue covers the first 500 rows.
 */
export function ReviewQueue({
  datasetId,
  metrics,
  initialMetricId,
  initialCell = null,
}: {
  datasetId: number;
  metrics: Metric[];
  initialMetricId: number | null;
  /** The cell to open on, e.g. `message:12` (a link from the grid). */
  initialCell?: string | null;
}) {
  const queryClient = useQueryClient();
  const me = useCaller()?.user ?? "default";
  const canLabel = useAccess("annotator");
  const mayLabel = canLabel.allowed;
  const [filters, setFilters] = useState<Filters>({
    metricId: initialMetricId ?? metrics[0]?.id ?? 0,
    status: "all",
    disagree: false,
    unlabelled: false,
  });
  const [currentKey, setCurrentKey] = useState<string | null>(initialCell);
  const scroller = useRef<HTMLDivElement>(null);
  const [showHelp, setShowHelp] = useState(false);
  // The note being typed for one cell; other cells show their saved note.
  const [draft, setDraft] = useState<{ key: string | null; text: string }>({ key: null, text: "" });
  const [error, setError] = useState<string | null>(null);
  /** What the latest save said, and when that save started (an earlier save landing later does not overwrite it). */
  const [saved, setSaved] = useState<{ started: number; text: string } | null>(null);
  const noteRef = useRef<HTMLTextAreaElement>(null);
  const metric = metrics.find((m) => m.id === filters.metricId) ?? null;

  const rowsQuery = useQuery({
    queryKey: ["review-rows", datasetId, metric?.evaluation_level],
    enabled: metric !== null,
    queryFn: async () => (await apiFetch<GridRow[]>(`/datasets/${datasetId}/grid?level=${metric!.evaluation_level}&limit=${QUEUE_ROWS}`)).data,
  });
  const labelsQuery = useQuery({
    queryKey: ["labels", datasetId, filters.metricId],
    enabled: metric !== null,
    queryFn: async () => (await apiFetch<Label[]>(`/labels?dataset_id=${datasetId}&pipeline_node_id=${filters.metricId}&limit=5000`)).data,
  });
  // What the metric's reference says of each cell (its saved reference, read as agreement reads it).
  const referenceQuery = useQuery({
    queryKey: ["reference-preview", filters.metricId, "saved", metric?.reference ?? null],
    enabled: metric?.reference != null,
    queryFn: async () =>
      (await apiFetch<ReferencePreview>(`/evaluation-pipeline-nodes/${filters.metricId}/reference-preview`, { method: "POST", json: {} })).data,
  });
  const referenceByCell = useMemo(() => {
    const out = new Map<string, ReferencePreview["readings"][number]["value"]>();
    for (const r of referenceQuery.data?.readings ?? []) out.set(cellKey(r), r.value);
    return out;
  }, [referenceQuery.data]);
  const disagreeQuery = useQuery({
    queryKey: ["agreement", datasetId, filters.metricId, "latest", "reference"],
    enabled: metric?.reference != null,
    queryFn: async () =>
      (await apiFetch<Agreement>(`/agreement?dataset_id=${datasetId}&pipeline_node_id=${filters.metricId}&a=latest&b=reference`)).data,
  });

  // The caller's own current label per cell; other people's are shown apart and never count as the caller's.
  // Labelled (`verdicts`): the caller gave a verdict; a note without one is not a label.
  const labelSets = useMemo(() => {
    const mine = new Map<string, Label>();
    const others = new Map<string, Label[]>();
    const verdicts = new Set<string>();
    for (const l of labelsQuery.data ?? []) {
      const key = cellKey(l);
      if (l.user_id !== me) others.set(key, [...(others.get(key) ?? []), l]);
      else if (!mine.has(key)) {
        mine.set(key, l);
        if (l.value !== null) verdicts.add(key);
      }
    }
    return { mine, others, verdicts };
  }, [labelsQuery.data, me]);
  const labelByCell = labelSets.mine;
  const verdicts = labelSets.verdicts;
  const disagreeing = useMemo(() => new Set((disagreeQuery.data?.disagreements ?? []).map(cellKey)), [disagreeQuery.data]);

  const queue = useMemo(() => {
    const rows = rowsQuery.data ?? [];
    return rows.filter((row) => {
      const key = cellKey(row);
      // The cell on screen stays in the queue until the reviewer moves on, even once it is labelled.
      if (key === currentKey) return true;
      const cell = row.cells[String(filters.metricId)];
      if (filters.status === "none" && cell) return false;
      if ((filters.status === "completed" || filters.status === "failed") && cell?.status !== filters.status) return false;
      if (filters.disagree && !disagreeing.has(key)) return false;
      if (filters.unlabelled && verdicts.has(key)) return false;
      return true;
    });
  }, [rowsQuery.data, filters, currentKey, disagreeing, verdicts]);

  const index = Math.max(0, queue.findIndex((r) => cellKey(r) === currentKey));
  const row = queue[index] ?? null;
  const rowKey = row ? cellKey(row) : null;
  const label = rowKey ? labelByCell.get(rowKey) : undefined;
  const labelledInQueue = queue.filter((r) => verdicts.has(cellKey(r))).length;
  const others = rowKey ? (labelSets.others.get(rowKey) ?? []) : [];

  const note = draft.key === rowKey ? draft.text : (label?.note ?? "");
  const setNote = (text: string) => setDraft({ key: rowKey, text });

  const conversationQuery = useQuery({
    queryKey: ["conversation", row?.conversation_id],
    enabled: row !== null,
    queryFn: async () => (await apiFetch<Conversation>(`/conversations/${row!.conversation_id}`)).data,
    staleTime: 60_000,
  });

  const move = useCallback(
    (step: number) => {
      if (!queue.length) return;
      const next = Math.min(queue.length - 1, Math.max(0, index + step));
      setCurrentKey(cellKey(queue[next]));
      setSaved(null);
    },
    [queue, index],
  );

  const save = useCallback(
    async (value: unknown, opts: { advance: boolean; note?: string }) => {
      if (!row || !metric) return;
      const started = performance.now();
      setError(null);
      // Move on at once: the next key press labels the next cell, however slow the save is.
      if (opts.advance && index + 1 < queue.length) setCurrentKey(cellKey(queue[index + 1]));
      try {
        const noteText = opts.note ?? (label?.note ?? null);
        await apiFetch<Label>("/labels", {
          method: "POST",
          json: {
            dataset_id: datasetId,
            pipeline_node_id: metric.id,
            entity_type: row.entity_type,
            entity_id: row.entity_id,
            value,
            note: noteText?.trim() ? noteText : null,
          },
        });
        const text = `Saved ${formatValue(value)}${opts.note ? " with note" : ""} for ${row.label}`;
        setSaved((shown) => (shown && shown.started > started ? shown : { started, text }));
        await queryClient.invalidateQueries({ queryKey: ["labels", datasetId] });
        await queryClient.invalidateQueries({ queryKey: ["agreement", datasetId] });
      } catch (e) {
        const why = e instanceof ApiError ? `${e.message}${e.details.length ? ` (${e.details.map((d) => d.message).join("; ")})` : ""}` : String(e);
        setError(`${row.label} was not saved: ${why}`);
      }
    },
    [row, metric, label, datasetId, queryClient, index, queue],
  );

  // A layout effect: the listener that sees the new cell is in place in the same commit that shows it, so a key
  // pressed as soon as the cell appears never goes to the previous cell's handler.
  useLayoutEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || isTyping(document.activeElement)) return;
      if (!metric) return;
      const k = e.key;
      if (k === "?") setShowHelp((s) => !s);
      else if (k === "Escape") {
        setShowHelp(false); // Esc closes the help; its default is left alone
        return;
      }
      else if (k === "j") move(1);
      else if (k === "k") move(-1);
      else if (!mayLabel && /^[pf1-5n]$/.test(k)) return;
      else if ((k === "p" || k === "f") && passFailValue(metric, k === "p") !== null) void save(passFailValue(metric, k === "p"), { advance: true });
      else if (/^[1-5]$/.test(k) && scoreValue(metric, Number(k)) !== null) void save(scoreValue(metric, Number(k)), { advance: true });
      else if (k === "n") noteRef.current?.focus();
      else return;
      e.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [metric, move, save, mayLabel]);

  // Open each cell on the entity judged: its message or step, else (a conversation) the first user message.
  const loaded = conversationQuery.data?.id === row?.conversation_id ? conversationQuery.data : undefined;
  useEffect(() => {
    const box = scroller.current;
    if (!box || !loaded || !rowKey) return;
    const target =
      (row?.entity_type === "conversation" ? box.querySelector('[data-role="user"]') : box.querySelector(`[data-entity="${rowKey}"]`)) as HTMLElement | null;
    if (!target) {
      box.scrollTop = 0;
      return;
    }
    const offset = target.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
    box.scrollTop = Math.max(0, offset - 12);
  }, [loaded, rowKey, row?.entity_type]);

  const setFilter = (patch: Partial<Filters>) => {
    setFilters((f) => ({ ...f, ...patch }));
    setCurrentKey(null);
  };

  if (!metrics.length) {
    return <p className="text-sm text-slate-500">This dataset has no metrics yet: add one in the workspace to review its verdicts.</p>;
  }
  const verdict = row ? verdictOf(row.cells[String(filters.metricId)]) : null;
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end gap-4" aria-label="Queue filters">
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Metric</span>
          <Select value={filters.metricId} onChange={(e) => setFilter({ metricId: Number(e.target.value) })} aria-label="Metric">
            {metrics.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name} ({levelNames[m.evaluation_level].toLowerCase()}, {outputTypeNames[m.output_type].toLowerCase()})
              </option>
            ))}
          </Select>
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Status</span>
          <Select value={filters.status} onChange={(e) => setFilter({ status: e.target.value as StatusFilter })} aria-label="Status">
            <option value="all">All cells</option>
            <option value="completed">Judged</option>
            <option value="failed">Failed</option>
            <option value="none">Not run</option>
          </Select>
        </label>
        <div className="text-sm">
          <label className="flex items-center gap-2" title={metric?.reference ? undefined : "Set a reference on the metric first"}>
            <input type="checkbox" checked={filters.disagree} disabled={!metric?.reference} onChange={(e) => setFilter({ disagree: e.target.checked })} />
            Judge and reference disagree
          </label>
          {metric && !metric.reference ? (
            <Link href={`/datasets/${datasetId}/metrics/${metric.id}#reference`} className="text-xs font-medium text-brand-700 hover:underline">
              Set a reference on the metric first →
            </Link>
          ) : null}
        </div>
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" checked={filters.unlabelled} onChange={(e) => setFilter({ unlabelled: e.target.checked })} />
          Unlabelled only
        </label>
        <Link href={`/datasets/${datasetId}/agreement?metric=${filters.metricId}`} className="text-sm font-medium text-brand-700 hover:underline">
          Agreement →
        </Link>
      </div>

      <div className="flex items-center gap-3 text-sm" data-testid="review-progress">
        <span>
          Cell <strong>{queue.length ? index + 1 : 0}</strong> of <strong>{queue.length}</strong>
        </span>
        <span className="text-slate-500">·</span>
        <span>
          <strong data-testid="review-labelled">{labelledInQueue}</strong> labelled by you
        </span>
        <div className="h-2 w-48 overflow-hidden rounded-full bg-slate-100" aria-hidden>
          <div className="h-full bg-brand-600" style={{ width: `${queue.length ? (100 * labelledInQueue) / queue.length : 0}%` }} />
        </div>
        <button type="button" className="ml-auto text-slate-500 hover:text-slate-800" onClick={() => setShowHelp((s) => !s)}>
          Keyboard: ?
        </button>
      </div>

      {showHelp ? (
        <Card className="px-5 py-3" role="dialog" aria-label="Keyboard shortcuts">
          <dl className="grid grid-cols-[8rem_1fr] gap-y-1 text-sm">
            {help.map(([keys, what]) => (
              <div key={keys} className="contents">
                <dt className="font-mono text-slate-800">{keys}</dt>
                <dd className="text-slate-600">{what}</dd>
              </div>
            ))}
          </dl>
        </Card>
      ) : null}
      {error ? (
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      ) : null}
      {saved ? (
        <p role="status" className="text-sm text-emerald-700">
          {saved.text}
          {/* The cell on screen now, named: the saved one is usually the previous cell (issue 51: a labeller took the toast's name for the current cell's). */}
          {row ? (
            <span className="text-slate-600">
              {" "}
              · now on <strong data-testid="review-now">“{row.label}”</strong>
            </span>
          ) : null}
        </p>
      ) : null}

      {rowsQuery.isPending ? <p className="text-sm text-slate-500">Loading cells…</p> : null}
      {!rowsQuery.isPending && !row ? <p className="text-sm text-slate-500">No cells match these filters.</p> : null}
      {row && metric ? (
        <div className="grid gap-4 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]" data-testid="review-cell" data-cell={rowKey ?? ""}>
          <Card className="flex max-h-[70vh] flex-col py-4">
            {/* The name stays in view above the transcript, which scrolls to the judged entity (issue 51: the
                queue opened scrolled past the conversation's name). */}
            <div className="border-b border-slate-100 px-5 pb-2">
              <p className="text-xs font-medium uppercase tracking-wide text-slate-400">{row.entity_type}</p>
              <h2 className="text-lg font-semibold text-slate-900" data-testid="review-title">
                {row.label}
              </h2>
            </div>
            <div ref={scroller} className="min-h-0 flex-1 overflow-y-auto px-5" data-testid="review-conversation">
              {conversationQuery.data ? (
                <ol className="mt-3 space-y-3" aria-label="Messages">
                  {conversationQuery.data.messages.map((m) => (
                    <MessageView key={m.id} message={m} highlight={row.entity_type === "conversation" ? null : rowKey} collapse />
                  ))}
                </ol>
              ) : (
                <p className="mt-3 text-sm text-slate-500">Loading the conversation…</p>
              )}
            </div>
          </Card>
          <Card className="space-y-4 px-5 py-4">
            <section>
              <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Judge · {metric.name}</h3>
              {verdict ? (
                <>
                  <p className="mt-1 text-2xl font-semibold" data-testid="review-verdict">
                    <Badge tone={verdict.failed ? "danger" : verdict.verdict === "fail" ? "warning" : "success"}>{verdict.verdict}</Badge>
                  </p>
                  {verdict.reasoning ? (
                    <p className="mt-2 whitespace-pre-wrap text-sm text-slate-700" data-testid="review-reasoning">
                      {verdict.reasoning}
                    </p>
                  ) : null}
                </>
              ) : (
                <p className="mt-1 text-sm text-slate-500">Not run yet.</p>
              )}
              {metric.reference ? (
                <p className="mt-2 text-sm" data-testid="review-reference">
                  <span className="text-slate-500">Reference{metric.reference.source === "meta" ? ` (${metric.reference.path}${metric.reference.rule ? ` ${metric.reference.rule.op} ${JSON.stringify(metric.reference.rule.value)}` : ""})` : " (labels)"}: </span>
                  <strong>
                    {referenceQuery.error
                      ? `could not be read (${referenceQuery.error.message})`
                      : referenceQuery.isPending
                        ? "…"
                        : rowKey && referenceByCell.has(rowKey)
                          ? formatValue(referenceByCell.get(rowKey))
                          : "none for this cell"}
                  </strong>
                </p>
              ) : null}
              {/* Only beside a reference the page could read: "none" next to "they disagree" contradicts itself. */}
              {rowKey && disagreeing.has(rowKey) && referenceByCell.has(rowKey) ? (
                <p className="mt-2 text-sm font-medium text-amber-700">The judge and the reference disagree on this cell.</p>
              ) : null}
            </section>
            <section>
              <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Your label ({me})</h3>
              <p className="mt-1 text-sm" data-testid="review-label">
                {label && label.value !== null ? (
                  <span className="rounded bg-brand-50 px-1.5 py-0.5 font-semibold text-brand-800 ring-1 ring-brand-200">{formatValue(label.value)}</span>
                ) : label ? (
                  "none (a note only)"
                ) : (
                  "none"
                )}
              </p>
              {!canLabel.allowed ? (
                <p className="mt-1 text-xs text-slate-500" data-testid="review-readonly">
                  {canLabel.why}: you can read labels but not give them.
                </p>
              ) : null}
              <div className="mt-2 flex flex-wrap gap-2">
                {metric.output_type === "checkbox" ? (
                  <>
                    <LabelButton given={label?.value} value={true} disabledWhy={canLabel.why} onClick={() => void save(true, { advance: true })}>
                      Pass (p)
                    </LabelButton>
                    <LabelButton given={label?.value} value={false} disabledWhy={canLabel.why} onClick={() => void save(false, { advance: true })}>
                      Fail (f)
                    </LabelButton>
                  </>
                ) : null}
                {metric.output_type === "progress" || metric.output_type === "number"
                  ? [1, 2, 3, 4, 5].map((n) => (
                      <LabelButton key={n} given={label?.value} value={scoreValue(metric, n)} disabledWhy={canLabel.why} onClick={() => void save(scoreValue(metric, n), { advance: true })}>
                        {formatValue(scoreValue(metric, n))} ({n})
                      </LabelButton>
                    ))
                  : null}
              </div>
              <p className="mt-2 text-xs text-slate-500" data-testid="review-keys-hint">
                {passFailWhyNot(metric) ??
                  (metric.output_type === "checkbox" ? "p / f: pass / fail, then the next cell." : "p / f: label 1 / 0, then the next cell.")}
              </p>
            </section>
            <OthersLabels key={rowKey} labels={others} hidden={!verdicts.has(rowKey ?? "")} />
            <section>
              <label className="text-xs font-semibold uppercase tracking-wide text-slate-500" htmlFor="review-note">
                Note (n)
              </label>
              <textarea
                id="review-note"
                ref={noteRef}
                value={note}
                onChange={(e) => setNote(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === "Escape") e.currentTarget.blur();
                  if (e.key === "Enter" && !e.shiftKey) {
                    e.preventDefault();
                    e.currentTarget.blur();
                    void save(label?.value ?? null, { advance: false, note });
                  }
                }}
                rows={3}
                readOnly={!canLabel.allowed}
                title={canLabel.why}
                className="mt-1 block w-full rounded-md border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-100"
                placeholder="Why the verdict is right or wrong (Enter saves)"
              />
            </section>
          </Card>
        </div>
      ) : null}
    </div>
  );
}

/** A label button, pressed (and marked) when it is the label the cell already has. */
function LabelButton({ given, value, disabledWhy, onClick, children }: { given: unknown; value: unknown; disabledWhy?: string; onClick: () => void; children: React.ReactNode }) {
  const pressed = given !== undefined && given === value;
  return (
    <Button size="sm" variant={pressed ? "primary" : "secondary"} aria-pressed={pressed} onClick={onClick} disabled={disabledWhy !== undefined} title={disabledWhy}>
      {pressed ? "✓ " : null}
      {children}
    </Button>
  );
}

/**
 * Other people's current labels of the cell, by name: shown apart from the caller's own, and only once the
 * caller has given a verdict on the cell (or asks to see them): seen first, they would steer it (issue 51).
 */
function OthersLabels({ labels: others, hidden }: { labels: Label[]; hidden: boolean }) {
  const [shown, setShown] = useState(false);
  return (
    <section data-testid="review-others">
      <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Other people&apos;s labels</h3>
      {others.length && hidden && !shown ? (
        <p className="mt-1 text-sm text-slate-500" data-testid="review-others-hidden">
          {others.length === 1 ? "1 label" : `${others.length} labels`} by others, hidden until you label this cell, so they do not steer yours.{" "}
          <button type="button" className="font-medium text-brand-700 hover:underline" onClick={() => setShown(true)}>
            Show them
          </button>
        </p>
      ) : others.length ? (
        <ul className="mt-1 space-y-1 text-sm">
          {others.map((o) => (
            <li key={o.id} data-user={o.user_id}>
              <span className="font-medium text-slate-700">{o.user_id}</span>:{" "}
              {o.value !== null ? <strong>{formatValue(o.value)}</strong> : <span className="text-slate-500">no verdict</span>}
              {o.note ? <span className="text-slate-500"> · “{o.note}”</span> : null}
            </li>
          ))}
        </ul>
      ) : (
        <p className="mt-1 text-sm text-slate-500">No one else has labelled this cell.</p>
      )}
    </section>
  );
}
