/**
 * A generation's changes, heard wherever it is worked: the process working it says so on an in-process
 * bus and, when the store is shared by processes (PostgreSQL), over NOTIFY, so a stream served by any
 * server follows a generation a worker process runs. Only ids travel; followers read the rows.
 */
import "server-only";
import { EventEmitter } from "node:events";
import { dialect } from "@/db/dialect";
import { getNotifier, subscribe as subscribeCluster } from "@/lib/cluster/notify";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";

/** NOTIFY channels: a generation changed (its id); one was created or given back (wake the workers); one was cancelled (its id) — the last two heard by its claim queue (queue.ts, lib/jobs/claims.ts). */
export const generationProgressChannel = "turnscope_generation_progress";
export const generationWakeChannel = "turnscope_generation_wake";
export const generationCancelChannel = "turnscope_generation_cancel";

const bus = processSingleton("generation.events", () => {
  const e = new EventEmitter();
  e.setMaxListeners(0);
  return e;
});

/** Say that a generation changed (a conversation written, its counts or status), here and in every other process. */
export function announceGeneration(id: number): void {
  bus.emit(`g${id}`);
  if (dialect.queuesRuns) void publish(generationProgressChannel, id);
}

/** Tell every process (this one included) something on a channel; a lost notification is only logged (followers also poll). */
async function publish(channel: string, id: number | null): Promise<void> {
  await getNotifier()
    .publish(channel, id)
    .catch((err: unknown) => log.warn("generation: notification not sent", { channel, err }));
}

/** Call `onChange` whenever the generation changes, in this process or (PostgreSQL) another; returns the unsubscribe. */
export async function followGeneration(id: number, onChange: () => void): Promise<() => void> {
  const channel = `g${id}`;
  bus.on(channel, onChange);
  let offCluster: (() => Promise<void>) | null = null;
  if (dialect.queuesRuns) {
    offCluster = await subscribeCluster(generationProgressChannel, (payload) => {
      if (payload === id) onChange();
    }).catch((err: unknown) => {
      log.warn("generation: cannot follow other processes; polling only", { err });
      return null;
    });
  }
  return () => {
    bus.off(channel, onChange);
    void offCluster?.();
  };
}

