/**
 * The grid's rows: conversation pages fetched lazily as they scroll into view (page-indexed queries
 * on the public grid endpoint), and the messages and steps of expanded conversations, flattened into
 * one list for the virtualiser. Nothing here fetches results separately: each page carries its cells.
 */
import { useQueries, useQueryClient, type QueryObserverResult } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import { apiFetch } from "@/lib/client/api";
import type { GridRow } from "@/lib/schemas/executions";
import { GRID_PAGE_SIZE, type DisplayRow } from "./types";

const CHILD_PAGE_SIZE = 500;

/** `estimated`: the total is the API's estimate (a large filtered dataset); a later page may know better. */
type Page = { items: GridRow[]; total: number; estimated?: boolean };
type Children = { messages: GridRow[]; steps: GridRow[] };

// Each visit to the page reads the grid afresh: the live overlay starts empty on every visit, so pages
// cached on an earlier visit would show results from before the runs that happened since.
let visits = 0;

export { emptyView, keepViewInUrl, viewFromSearch, type GridView } from "./grid-view";
import { emptyView, type GridView } from "./grid-view";

const isEmptyView = (v: GridView) => !v.meta && !v.filter && !v.sort;

function viewQuery(v: GridView): string {
  const params = new URLSearchParams();
  if (v.meta) params.set("meta", v.meta);
  if (v.filter) params.set("filter", v.filter);
  if (v.sort) params.set("sort", v.sort);
  const q = params.toString();
  return q ? `&${q}` : "";
}

function gridPageKey(datasetId: number, visit: number, page: number, view: GridView) {
  return ["grid", datasetId, visit, "conversation", page, view.meta, view.filter, view.sort] as const;
}

function gridChildrenKey(datasetId: number, visit: number, conversationId: number) {
  return ["grid", datasetId, visit, "children", conversationId] as const;
}

async function fetchPage(datasetId: number, page: number, view: GridView): Promise<Page> {
  const { data, total, estimated } = await apiFetch<GridRow[]>(
    `/datasets/${datasetId}/grid?level=conversation&limit=${GRID_PAGE_SIZE}&offset=${page * GRID_PAGE_SIZE}${viewQuery(view)}`,
  );
  return { items: data, total: total ?? data.length, estimated };
}

async function fetchLevel(datasetId: number, level: "message" | "step", conversationId: number): Promise<GridRow[]> {
  const rows: GridRow[] = [];
  // A conversation is small, but an agent transcript can have hundreds of steps: read every page.
  for (;;) {
    const { data, total } = await apiFetch<GridRow[]>(
      `/datasets/${datasetId}/grid?level=${level}&conversation_id=${conversationId}&limit=${CHILD_PAGE_SIZE}&offset=${rows.length}`,
    );
    rows.push(...data);
    if (data.length === 0 || rows.length >= (total ?? 0)) return rows;
  }
}

async function fetchChildren(datasetId: number, conversationId: number): Promise<Children> {
  const [messages, steps] = await Promise.all([
    fetchLevel(datasetId, "message", conversationId),
    fetchLevel(datasetId, "step", conversationId),
  ]);
  return { messages, steps };
}

function combineData<T>(results: QueryObserverResult<T>[]) {
  return results.map((r) => ({ data: r.data, error: r.error }));
}

/** Messages with their steps under them; steps of other messages (user, tool) follow at message depth. */
export function childRows(conversationId: number, children: Children): DisplayRow[] {
  const out: DisplayRow[] = [];
  const byMessage = new Map<number, GridRow[]>();
  for (const s of children.steps) {
    const list = byMessage.get(s.message_id ?? 0);
    if (list) list.push(s);
    else byMessage.set(s.message_id ?? 0, [s]);
  }
  for (const m of children.messages) {
    const steps = byMessage.get(m.entity_id) ?? [];
    byMessage.delete(m.entity_id);
    out.push({ kind: "entity", id: `message:${m.entity_id}`, row: m, depth: 1, index: -1, expandable: false });
    for (const s of steps) out.push({ kind: "entity", id: `step:${s.entity_id}`, row: s, depth: 2, index: -1, expandable: false });
  }
  for (const steps of byMessage.values()) {
    for (const s of steps) out.push({ kind: "entity", id: `step:${s.entity_id}`, row: s, depth: 1, index: -1, expandable: false });
  }
  if (out.length === 0) {
    out.push({ kind: "note", id: `empty:${conversationId}`, depth: 1, text: "No assistant messages or steps in this conversation.", tone: "muted" });
  }
  return out;
}

/**
 * The rows a view has, from its loaded pages: an exact total from any page is the total; otherwise the largest
 * estimate, which grows as full pages are read further on (a full page's estimate covers at least one more
 * row), so scrolling reaches every row. `fallback` before any page is loaded.
 */
export function viewTotal(loaded: Array<Page | undefined>, fallback: number): number {
  const pages = loaded.filter((p): p is Page => Boolean(p));
  if (pages.length === 0) return fallback;
  return pages.find((p) => !p.estimated)?.total ?? Math.max(...pages.map((p) => p.total));
}

/** Rows of the grid for the virtualiser, and the calls that widen what is loaded. */
export function useGridData(datasetId: number, initial: Page, view: GridView = emptyView) {
  const [visit] = useState(() => ++visits);
  const queryClient = useQueryClient();
  const [requested, setRequested] = useState<ReadonlySet<number>>(() => new Set([0]));
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(() => new Set());
  const pageList = useMemo(() => [...requested].sort((a, b) => a - b), [requested]);
  const expandedList = useMemo(() => [...expanded], [expanded]);

  const pages = useQueries({
    queries: pageList.map((page) => ({
      queryKey: gridPageKey(datasetId, visit, page, view),
      queryFn: () => fetchPage(datasetId, page, view),
      // Cells change through the live stream, so a loaded page need not be fetched again on its own.
      staleTime: 5 * 60_000,
      ...(page === 0 && isEmptyView(view) ? { initialData: initial } : {}),
    })),
    combine: combineData<Page>,
  });

  const children = useQueries({
    queries: expandedList.map((conversationId) => ({
      queryKey: gridChildrenKey(datasetId, visit, conversationId),
      queryFn: () => fetchChildren(datasetId, conversationId),
      staleTime: 5 * 60_000,
    })),
    combine: combineData<Children>,
  });

  const total = viewTotal(
    pages.map((p) => p.data),
    isEmptyView(view) ? initial.total : 0,
  );
  const pageError = pages.find((p) => p.error)?.error ?? null;

  const rows = useMemo(() => {
    const byPage = new Map<number, GridRow[]>();
    pageList.forEach((page, i) => {
      const items = pages[i]?.data?.items;
      if (items) byPage.set(page, items);
    });
    const childrenOf = new Map<number, (typeof children)[number]>();
    expandedList.forEach((id, i) => childrenOf.set(id, children[i]));

    const out: DisplayRow[] = [];
    for (let index = 0; index < total; index++) {
      const row = byPage.get(Math.floor(index / GRID_PAGE_SIZE))?.[index % GRID_PAGE_SIZE];
      if (!row) {
        out.push({ kind: "placeholder", id: `placeholder:${index}`, index });
        continue;
      }
      out.push({ kind: "entity", id: `conversation:${row.entity_id}`, row, depth: 0, index, expandable: true });
      if (!expanded.has(row.entity_id)) continue;
      const kids = childrenOf.get(row.entity_id);
      if (kids?.data) out.push(...childRows(row.entity_id, kids.data));
      else if (kids?.error) {
        out.push({ kind: "note", id: `error:${row.entity_id}`, depth: 1, text: `Could not load messages: ${kids.error.message}`, tone: "error" });
      } else out.push({ kind: "note", id: `loading:${row.entity_id}`, depth: 1, text: "Loading messages and steps…", tone: "muted" });
    }
    return out;
  }, [pageList, pages, expandedList, children, expanded, total]);

  /** Ask for the pages holding these conversation indexes (the visible range); loaded pages stay. */
  const requestRows = useCallback((indexes: number[]) => {
    setRequested((prev) => {
      const wanted = indexes.map((i) => Math.floor(i / GRID_PAGE_SIZE)).filter((p) => !prev.has(p));
      return wanted.length ? new Set([...prev, ...wanted]) : prev;
    });
  }, []);

  const toggleExpanded = useCallback((conversationId: number) => {
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(conversationId)) next.delete(conversationId);
      else next.add(conversationId);
      return next;
    });
  }, []);

  /**
   * Reads a view's first page before it is shown: a view the API refuses (a bad filter, sort or meta key)
   * throws its error and the grid keeps the rows it has, instead of turning into an error.
   */
  const checkView = useCallback(
    async (next: GridView) => {
      await queryClient.fetchQuery({ queryKey: gridPageKey(datasetId, visit, 0, next), queryFn: () => fetchPage(datasetId, 0, next), staleTime: 5 * 60_000 });
    },
    [queryClient, datasetId, visit],
  );

  return { rows, total, expanded, toggleExpanded, requestRows, pageError, checkView };
}
