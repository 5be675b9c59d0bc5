/**
 * The trace store's retention (issue 52): the spans of a live conversation are kept OTEL_RETENTION_DAYS
 * (default 30; per dataset name by OTEL_RETENTION_DAYS_BY_DATASET; 0 keeps them for good) after its newest
 * span arrived. Spans only serve to rebuild a conversation as it grows; once it has been quiet that long
 * its spans, traces and live record are deleted and the conversation stays as built. A span arriving later
 * under the same conversation key starts a new conversation.
 *
 * Each server process sweeps every RETENTION_SWEEP_MS in the background: a few conversations per
 * transaction (at most ~BATCH_SPANS spans), on SQLite on the write thread, the loop yielded between
 * batches, so neither a large backlog nor a long conversation holds the server.
 */
import "server-only";
import { datasetsWithSpans, expiredOtelConversations, forgetOtelConversations } from "@/db/repositories/otel-retention";
import { getConfig, retentionByDataset } from "@/lib/config";
import { log } from "@/lib/log";
import { definePeriodic } from "@/lib/jobs";

/** How often each process looks for expired conversations. */
export const RETENTION_SWEEP_MS = 10 * 60_000;
/** Spans deleted per transaction, about (a conversation is never split: one larger than this goes alone). */
const BATCH_SPANS = 5_000;
const BATCH_CONVERSATIONS = 500;
const DAY_MS = 86_400_000;

/** Days the spans of a dataset's conversations are kept after their newest span (0: for good). */
export function retentionDays(datasetName: string): number {
  const config = getConfig();
  const byName = config.OTEL_RETENTION_DAYS_BY_DATASET ? retentionByDataset(config.OTEL_RETENTION_DAYS_BY_DATASET) : null;
  return byName?.get(datasetName) ?? config.OTEL_RETENTION_DAYS;
}

export type RetentionSweep = { conversations: number; spans: number };

const loop = definePeriodic("otel.retention", {
  everyMs: () => RETENTION_SWEEP_MS,
  firstAfterMs: 60_000,
  pass: () => sweepExpiredSpans(),
  failed: "otel retention sweep failed",
});

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Delete what has expired by `now` in every dataset; how many conversations and spans went. */
export async function sweepExpiredSpans(now = Date.now()): Promise<RetentionSweep> {
  const done: RetentionSweep = { conversations: 0, spans: 0 };
  for (const dataset of await datasetsWithSpans()) {
    const days = retentionDays(dataset.name);
    if (!(days > 0)) continue;
    const before = new Date(now - days * DAY_MS).toISOString();
    for (;;) {
      const expired = await expiredOtelConversations(dataset.id, before, BATCH_CONVERSATIONS);
      if (expired.length === 0) break;
      // Conversations in turn up to ~BATCH_SPANS spans (at least one).
      let progress = 0;
      for (let i = 0; i < expired.length; ) {
        const batch: number[] = [];
        let spans = 0;
        while (i < expired.length && (batch.length === 0 || spans + expired[i].spans <= BATCH_SPANS)) {
          spans += expired[i].spans;
          batch.push(expired[i++].id);
        }
        if (loop.stopping()) return done; // shutting down: the rest waits for the next start
        const gone = await forgetOtelConversations(batch, before);
        done.conversations += gone.conversations;
        done.spans += gone.spans;
        progress += gone.conversations;
        await yieldToLoop();
      }
      // Every listed one gained a span meanwhile: the rest are not expired any more either way.
      if (progress === 0) break;
    }
  }
  if (done.conversations > 0) log.info("otel retention: expired spans deleted", { ...done });
  return done;
}


/** Start this process's retention sweep (idempotent): a first pass a minute after start, then every RETENTION_SWEEP_MS. */
export const startRetentionSweep = (): void => loop.start();

/** Stop the sweep (shutdown): a pass in progress ends after its current batch. */
export const stopRetentionSweep = (): Promise<void> => loop.stop();
