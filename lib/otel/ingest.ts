/**
 * Spans in, conversations out. An export's spans are stored at once (one transaction, known spans
 * skipped); the conversations they touched are rebuilt a little later (OTEL_ASSEMBLY_DELAY_MS), so an
 * agent exporting every few hundred milliseconds costs one rebuild per conversation per pass, not
 * one per export. What is still to rebuild is read from the store (`assembled_revision < revision`),
 * so a pass also finishes the work a stopped process left, and two processes never write one
 * conversation twice for the same revision.
 */
import "server-only";
import { createHash } from "node:crypto";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { loadConversationSpans, saveAssembly, staleConversationIds, storeSpans, type SpanToStore } from "@/db/repositories/otel";
import { assembleConversation, type AssembledMessage } from "./assemble";
import type { DecodedExport } from "./decode";
import { conversationKeyOf, datasetNameOf } from "./grouping";
import type { OtelSpan } from "./types";

export type IngestOutcome = { accepted: number; duplicates: number; rejected: number; errorMessage?: string };

const state = processSingleton("otel.assembler", () => ({
  timer: undefined as ReturnType<typeof setTimeout> | undefined,
  running: undefined as Promise<void> | undefined,
  again: false,
}));

/** Store a decoded export's spans for `userId` and schedule the rebuild of the conversations they touched. */
export async function ingestExport(userId: string, decoded: DecodedExport): Promise<IngestOutcome> {
  const rows: SpanToStore[] = decoded.spans.map((span) => ({
    datasetName: datasetNameOf(span.resource),
    traceId: span.traceId,
    spanId: span.spanId,
    name: span.name.slice(0, 1000),
    startNs: span.startNs,
    key: conversationKeyOf(span)?.slice(0, 500),
    data: span,
  }));
  const result = rows.length ? await storeSpans(userId, rows) : { inserted: 0, duplicates: 0, conversationIds: [] };
  if (result.conversationIds.length) scheduleAssembly();
  const errorMessage = decoded.errors.length
    ? `${decoded.rejected} span(s) rejected: ${decoded.errors.slice(0, 5).join("; ")}${decoded.errors.length > 5 ? `; and ${decoded.errors.length - 5} more` : ""}`
    : undefined;
  return { accepted: result.inserted, duplicates: result.duplicates, rejected: decoded.rejected, ...(errorMessage ? { errorMessage } : {}) };
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

/** Rebuild every conversation that is behind its spans now (tests, shutdown, and the scheduled passes). */
export async function flushAssembly(): Promise<void> {
  if (state.timer) {
    clearTimeout(state.timer);
    state.timer = undefined;
  }
  if (state.running) await state.running;
  state.again = false;
  await runPasses();
}

const PASS_SIZE = 200;
const YIELD_EVERY_MS = 10;

async function rebuildStale(): Promise<void> {
  for (;;) {
    const ids = await staleConversationIds(PASS_SIZE);
    if (!ids.length) return;
    let progressed = false;
    let slice = performance.now();
    for (const id of ids) {
      // SQLite's statements run synchronously: every few milliseconds of rebuilding, let waiting exports
      // and readers in (not after each conversation, or a busy event loop starves the pass).
      if (performance.now() - slice > YIELD_EVERY_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
      try {
        if (await rebuildConversation(id)) progressed = true;
      } catch (error) {
        // One conversation that cannot be rebuilt must not hold up the others; it is tried again next pass.
        log.error("otel conversation rebuild failed", { otel_conversation_id: id, error });
      }
    }
    // Another process holds newer revisions of these: leave them to it rather than spin.
    if (!progressed) return;
  }
}

/** Fingerprint of one message as stored: a rebuild rewrites messages from the first one whose fingerprint changed. */
export function messageHash(m: AssembledMessage): string {
  return createHash("sha1").update(JSON.stringify(m)).digest("base64url");
}

/** Rebuild one conversation from its stored spans; false when another rebuild already covered this revision. */
export async function rebuildConversation(id: number): Promise<boolean> {
  const loaded = await loadConversationSpans(id);
  if (!loaded) return false;
  const spans = loaded.spans as OtelSpan[];
  const built = spans.length ? assembleConversation(loaded.key, spans) : null;
  // Spans with no message in them (HTTP, database) make no conversation of their own.
  const assembled = built && built.messages.length ? built : null;
  const outcome = await saveAssembly(id, loaded.revision, assembled, assembled ? assembled.messages.map(messageHash) : []);
  return outcome !== "superseded";
}
