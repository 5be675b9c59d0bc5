/**
 * What a stream of a generation sends (GET /api/generations/{id}/events), read from the store whenever the
 * generation changes — in this process or, on PostgreSQL, any other — and every 2 s besides: `processing`
 * with its counts, one `conversation` event per conversation written since the last look, and `done`
 * with the generation once it is final and no process holds it. A reconnect starts again from the first
 * conversation, so no conversation is missed.
 */
import "server-only";
import { writtenConversations } from "@/db/repositories/generation-queue";
import * as repo from "@/db/repositories/targets";
import { notFound } from "@/lib/errors";
import { followGeneration } from "./events";
import { getGeneration, toGenerationWire } from "./index";

export type GenerationEvent = { event: "conversation" | "processing" | "done"; data: unknown };

const POLL_MS = 2_000;

/** Follow a generation until it is done; returns the function that stops following. */
export async function generationFeed(id: number, send: (e: GenerationEvent) => void, close: () => void): Promise<() => void> {
  const first = await repo.getGeneration(id);
  if (!first) throw notFound("Generation", id);
  let lastId = 0;
  let lastCounts = "";
  let ended = false;
  let running: Promise<void> | null = null;
  let again = false;
  const look = async () => {
    const row = await repo.getGeneration(id);
    if (!row) return finish();
    for (const c of await writtenConversations(row.datasetId, lastId)) {
      lastId = c.id;
      send({ event: "conversation", data: { generation_id: id, conversation_id: c.id, source_conversation_id: c.sourceConversationId, repeat: c.repeat, stop_reason: c.stopReason, error: c.error } });
    }
    const counts = JSON.stringify([row.status, row.completed, row.failed, row.total]);
    if (counts !== lastCounts) {
      lastCounts = counts;
      const wire = toGenerationWire(row);
      send({ event: "processing", data: { generation_id: id, status: wire.status, completed: wire.completed, failed: wire.failed, total: wire.total, stop_reasons: wire.stop_reasons } });
    }
    if (!["pending", "processing"].includes(row.status) && !row.claimedBy) {
      send({ event: "done", data: await getGeneration(id) });
      finish();
    }
  };
  // One look at a time; a change heard during a look asks for one more after it.
  const poke = () => {
    if (ended) return;
    if (running) return void (again = true);
    running = look()
      .catch(() => undefined)
      .finally(() => {
        running = null;
        if (again && !ended) {
          again = false;
          poke();
        }
      });
  };
  const unfollow = await followGeneration(id, poke);
  const timer = setInterval(poke, POLL_MS);
  function finish() {
    if (ended) return;
    ended = true;
    clearInterval(timer);
    unfollow();
    close();
  }
  poke();
  return finish;
}
