/**
 * Spans in, conversations out. An export's spans are stored at once (one transaction, known spans
 * skipped); the conversations they touched are rebuilt a little later (OTEL_ASSEMBLY_DELAY_MS), so an
 * agent exporting every few hundred milliseconds costs one rebuild per conversation per pass, not
 * one per export. What is still to rebuild is read from the store (`assembled_revision < revision`),
 * so a pass also finishes the work a stopped process left, and two processes never write one
 * conversation twice for the same revision.
 *
 * A rebuild reads only what is new: the assembly of a recently active conversation is kept in memory
 * (at most OTEL_ASSEMBLY_CACHE_SPANS spans' worth, least recently rebuilt dropped first), the store
 * says how many spans each of its traces holds, and only the spans of traces that gained some are
 * read and added. A trace that left the conversation, or a model call that goes before one already
 * merged, rebuilds it from all of its spans. Conversations rebuilt together are written together.
 *
 * Exports go first: the rebuild runs on the event loop, and each export needs the loop twice (its request,
 * its answer). While an export is being received or answered (`exportInFlight`), a pass works in short
 * slices and pauses between them until the exports are answered (at most EXPORT_PAUSE_MS at a time, so a
 * stream of exports that never stops slows the rebuild down but cannot stop it); it catches up once they stop.
 */
import "server-only";
import { createHash } from "node:crypto";
import { dialect } from "@/db/dialect";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import {
  conversationHead,
  loadConversationSpans,
  loadConversationsSpans,
  loadTraceSpans,
  saveAssemblies,
  setAsideAssembly,
  spanStoreForThreads,
  staleConversations,
  storeSpans,
  type AssemblyToSave,
  type ConversationSpans,
  type SaveOutcome,
} from "@/db/repositories/otel";
import type { ThreadStore } from "@/db/sqlite-thread-store";
import { ConversationAssembly, type AssembledMessage } from "./assemble";
import type { DecodedExport } from "./decode";
import { drainInbox, onInboxStored } from "./inbox";
import { rejectionMessage, spanRows, type StoredExport } from "./store-export";
import type { OtelSpan } from "./types";

export type IngestOutcome = { accepted: number; duplicates: number; rejected: number; errorMessage?: string };

const state = processSingleton("otel.assembler", () => ({
  timer: undefined as ReturnType<typeof setTimeout> | undefined,
  running: undefined as Promise<void> | undefined,
  again: false,
}));

/** Store a decoded export's spans for `userId` here and schedule the rebuild of the conversations they touched. */
export async function ingestExport(userId: string, decoded: DecodedExport): Promise<IngestOutcome> {
  const rows = spanRows(decoded.spans);
  const result = rows.length ? await storeSpans(userId, rows, { compress: getConfig().OTEL_SPAN_COMPRESSION === "on" }) : { inserted: 0, duplicates: 0, conversationIds: [] };
  if (result.conversationIds.length) scheduleAssembly();
  const errorMessage = rejectionMessage(decoded);
  return { accepted: result.inserted, duplicates: result.duplicates, rejected: decoded.rejected, ...(errorMessage ? { errorMessage } : {}) };
}

/** An export an input-pool thread stored (lib/otel/store-export.ts): schedule the rebuild of the conversations it touched. */
export function ingestedOffLoop(stored: StoredExport): IngestOutcome {
  if (stored.conversationIds.length) scheduleAssembly();
  const { conversationIds: _touched, ...outcome } = stored;
  return outcome;
}

// An export the trace inbox stored (lib/otel/inbox.ts): its conversations are rebuilt as any export's.
onInboxStored(ingestedOffLoop);

/** Where an input-pool thread may store an export itself (SQLite in a file); null where exports are stored in process. */
export async function threadStore(): Promise<ThreadStore | null> {
  return spanStoreForThreads();
}

/** Rebuild soon (after OTEL_ASSEMBLY_DELAY_MS), once for everything that arrives meanwhile. */
export function scheduleAssembly(): void {
  if (state.running) {
    state.again = true;
    return;
  }
  if (state.timer) return;
  state.timer = setTimeout(() => {
    state.timer = undefined;
    void runPasses();
  }, getConfig().OTEL_ASSEMBLY_DELAY_MS);
  state.timer.unref?.();
}

function runPasses(): Promise<void> {
  if (state.running) return state.running;
  state.running = (async () => {
    try {
      await rebuildStale();
    } catch (error) {
      log.error("otel assembly failed", { error });
    } finally {
      state.running = undefined;
      if (state.again) {
        state.again = false;
        scheduleAssembly();
      }
    }
  })();
  return state.running;
}

/** Store what the trace inbox holds, then rebuild every conversation that is behind its spans now (tests, shutdown, and the scheduled passes). */
export async function flushAssembly(): Promise<void> {
  await drainInbox();
  if (state.timer) {
    clearTimeout(state.timer);
    state.timer = undefined;
  }
  if (state.running) await state.running;
  state.again = false;
  await runPasses();
}

const PASS_SIZE = 200;
/** A rebuild's slice on the event loop between two yields, when no export is waiting for the loop. */
const YIELD_EVERY_MS = 10;
/** The slice while an export is in flight: its answer waits for at most about this (and one conversation). */
const EXPORT_SLICE_MS = 2;
/** While exports are in flight, the rebuild pauses this long at most between two slices (then runs one anyway). */
const EXPORT_PAUSE_MS = 20;
/**
 * Conversations read from the store together (those not cached) hold at most about this many spans. SQLite's
 * read runs on the event loop, one uninterrupted piece (2,000 spans were tens of milliseconds, more on a busy
 * machine), so it reads 400; PostgreSQL's is awaited (the loop is free meanwhile), so it reads 2,000 a statement group.
 */
const readTogetherSpans = (): number => (dialect.queuesRuns ? 2_000 : 400);

const exports = processSingleton("otel.exports-in-flight", () => ({ count: 0, idle: new Set<() => void>() }));

/**
 * Receive, store and answer an OTLP export as `work`, counted as in flight meanwhile: rebuild passes
 * let it go first (short slices, pausing until it is answered).
 */
export async function exportInFlight<T>(work: () => Promise<T>): Promise<T> {
  exports.count++;
  try {
    return await work();
  } finally {
    exports.count--;
    if (exports.count === 0) for (const done of [...exports.idle]) done();
  }
}

/** Resolves once no export is in flight, or after `ms` at most. */
function exportsAnswered(ms: number): Promise<void> {
  if (exports.count === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      exports.idle.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    exports.idle.add(done);
  });
}

/** Let waiting requests in (I/O first), and exports in flight go first for up to EXPORT_PAUSE_MS. */
async function yieldToExports(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await exportsAnswered(EXPORT_PAUSE_MS);
}

/** How long the rebuild may hold the loop now. */
function sliceMs(): number {
  return exports.count > 0 ? EXPORT_SLICE_MS : YIELD_EVERY_MS;
}

/** A pass's conversations in runs that are read together: as many as fit readTogetherSpans(), at least one. */
function readTogether(stale: Array<{ id: number; spans: number }>): number[][] {
  const groups: number[][] = [];
  let group: number[] = [];
  let spans = 0;
  const most = readTogetherSpans();
  for (const c of stale) {
    if (group.length && spans + c.spans > most) {
      groups.push(group);
      group = [];
      spans = 0;
    }
    group.push(c.id);
    spans += c.spans;
  }
  if (group.length) groups.push(group);
  return groups;
}

async function rebuildStale(): Promise<void> {
  for (;;) {
    const stale = await staleConversations(PASS_SIZE);
    if (!stale.length) return;
    let progressed = false;
    let built: AssemblyToSave[] = [];
    const save = async () => {
      if (!built.length) return;
      const batch = built;
      built = [];
      if ((await saveBuilt(batch)).some((o) => o !== "superseded")) progressed = true;
    };
    let slice = performance.now();
    const pause = async () => {
      await save();
      await yieldToExports();
      slice = performance.now();
    };
    for (const group of readTogether(stale)) {
      if (performance.now() - slice > sliceMs()) await pause();
      // The spans of those not cached, read together (a conversation cached reads only what it has not read).
      let read: Read | undefined;
      try {
        const uncached = group.filter((id) => !cache.entries.has(id));
        if (uncached.length > 1) read = { ids: new Set(uncached), spans: await loadConversationsSpans(uncached) };
      } catch (error) {
        // Read one by one below instead, so a conversation that cannot be read is set aside alone.
        log.error("otel spans could not be read together; reading them one by one", { reason: String((error as Error).message).split("\n")[0].slice(0, 200) });
      }
      for (const id of group) {
        // SQLite's statements run synchronously: every few milliseconds of rebuilding, write what was
        // rebuilt and let waiting exports and readers in (not after each conversation, or a busy event
        // loop starves the pass); while exports are in flight, sooner, and wait for them.
        if (performance.now() - slice > sliceMs()) await pause();
        try {
          const one = await buildConversation(id, read);
          if (one) built.push(one);
        } catch (error) {
          // One conversation that cannot be rebuilt must not hold up the others: set aside until new spans come.
          await setAside(id, undefined, error);
          progressed = true;
        }
      }
    }
    await save();
    // Another process holds newer revisions of these: leave them to it rather than spin.
    if (!progressed) return;
  }
}

/** Write rebuilt conversations together; if that fails, one by one, so one cannot hold up the others. */
async function saveBuilt(list: AssemblyToSave[]): Promise<SaveOutcome[]> {
  try {
    return await saveAssemblies(list);
  } catch (error) {
    if (list.length === 1) {
      await setAside(list[0].id, list[0].revision, error);
      return ["set_aside"];
    }
    const outcomes: SaveOutcome[] = [];
    for (const item of list) outcomes.push(...(await saveBuilt([item])));
    return outcomes;
  }
}

/**
 * Log a failed rebuild and set the conversation aside until new spans arrive. The log names the reason,
 * never the conversation's text (a store error quotes the failed statement's values: its first line only).
 */
async function setAside(id: number, revision: number | undefined, error: unknown): Promise<void> {
  forget(id);
  const cause = (error as { cause?: unknown }).cause;
  const reason = String((cause instanceof Error ? cause : (error as Error))?.message ?? error).split("\n")[0].slice(0, 200);
  log.error("otel conversation rebuild failed; set aside until it gets new spans", { otel_conversation_id: id, reason });
  try {
    await setAsideAssembly(id, revision);
  } catch (again) {
    log.error("otel conversation could not be set aside", { otel_conversation_id: id, reason: String((again as Error).message).split("\n")[0].slice(0, 200) });
  }
}

/** Fingerprint of one message as stored: a rebuild rewrites messages from the first one whose fingerprint changed. */
export function messageHash(m: AssembledMessage): string {
  return createHash("sha1").update(JSON.stringify(m)).digest("base64url");
}

/** A conversation's assembly as far as it has read its spans: which spans of which trace it holds. */
type CachedAssembly = { datasetId: number; key: string; assembly: ConversationAssembly; fed: Map<string, Set<string>>; weight: number };

const cache = processSingleton("otel.assemblies", () => ({ entries: new Map<number, CachedAssembly>(), weight: 0 }));

function forget(id: number): void {
  const entry = cache.entries.get(id);
  if (!entry) return;
  cache.entries.delete(id);
  cache.weight -= entry.weight;
}

function remember(id: number, entry: CachedAssembly): void {
  forget(id);
  const limit = getConfig().OTEL_ASSEMBLY_CACHE_SPANS;
  entry.weight = entry.assembly.weight;
  if (entry.weight > limit) return;
  cache.entries.set(id, entry);
  cache.weight += entry.weight;
  // Least recently rebuilt first (a Map keeps insertion order, and a rebuilt conversation is inserted again).
  for (const [oldest] of cache.entries) {
    if (cache.weight <= limit) break;
    forget(oldest);
  }
}

/** Spans the assembly has not read yet, recording them as read. */
function unread(entry: CachedAssembly, traceId: string, spans: OtelSpan[]): OtelSpan[] {
  let fed = entry.fed.get(traceId);
  if (!fed) entry.fed.set(traceId, (fed = new Set()));
  const out: OtelSpan[] = [];
  for (const s of spans) {
    if (fed.has(s.spanId)) continue;
    fed.add(s.spanId);
    out.push(s);
  }
  return out;
}

/** Conversations' spans read together: a conversation of `ids` missing from `spans` is gone. */
type Read = { ids: Set<number>; spans: Map<number, ConversationSpans> };

/** A conversation's assembly from every one of its spans (from `read` when they were read together). */
async function assembleFromAll(id: number, read?: Read): Promise<{ revision: number; entry: CachedAssembly } | undefined> {
  const loaded = read?.ids.has(id) ? read.spans.get(id) : await loadConversationSpans(id);
  if (!loaded) return undefined;
  const entry: CachedAssembly = { datasetId: loaded.datasetId, key: loaded.key, assembly: new ConversationAssembly(), fed: new Map(), weight: 0 };
  const spans = loaded.spans as OtelSpan[];
  const byTrace = new Map<string, OtelSpan[]>();
  for (const s of spans) {
    const list = byTrace.get(s.traceId);
    if (list) list.push(s);
    else byTrace.set(s.traceId, [s]);
  }
  for (const [traceId, list] of byTrace) unread(entry, traceId, list);
  entry.assembly.add(spans);
  return { revision: loaded.revision, entry };
}

/** A conversation's assembly brought up to its stored spans, reading only those it has not read. */
async function assembleLatest(id: number, read?: Read): Promise<{ revision: number; entry: CachedAssembly } | undefined> {
  const entry = cache.entries.get(id);
  if (!entry) return assembleFromAll(id, read);
  const head = await conversationHead(id);
  if (!head) return undefined;
  const now = new Map(head.traces.map((t) => [t.traceId, t.spans]));
  const moved = head.datasetId !== entry.datasetId || head.key !== entry.key || [...entry.fed].some(([traceId, fed]) => (now.get(traceId) ?? 0) < fed.size);
  if (moved) return assembleFromAll(id);
  const fresh: OtelSpan[] = [];
  for (const { traceId, spans } of head.traces) {
    if ((entry.fed.get(traceId)?.size ?? 0) === spans) continue;
    fresh.push(...unread(entry, traceId, (await loadTraceSpans(head.datasetId, traceId)) as OtelSpan[]));
  }
  if (fresh.length && !entry.assembly.add(fresh)) return assembleFromAll(id);
  return { revision: head.revision, entry };
}

/** Rebuild one conversation from its stored spans, ready to save; undefined when it is gone. */
async function buildConversation(id: number, read?: Read): Promise<AssemblyToSave | undefined> {
  let latest;
  try {
    latest = await assembleLatest(id, read);
  } catch (error) {
    forget(id);
    throw error;
  }
  if (!latest) {
    forget(id);
    return undefined;
  }
  const { revision, entry } = latest;
  const built = entry.fed.size ? entry.assembly.result(entry.key) : null;
  // Spans with no message in them (HTTP, database) make no conversation of their own.
  const assembled = built && built.messages.length ? built : null;
  if (assembled) remember(id, entry);
  else forget(id);
  return { id, revision, conversation: assembled, hashes: assembled ? assembled.messages.map(messageHash) : [] };
}

/** Rebuild one conversation from its stored spans; false when another rebuild already covered this revision. */
export async function rebuildConversation(id: number): Promise<boolean> {
  const one = await buildConversation(id);
  if (!one) return false;
  const [outcome] = await saveBuilt([one]);
  return outcome !== "superseded";
}
