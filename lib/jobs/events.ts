/**
 * A job's changes and cancels, heard wherever it is worked: on an in-process bus and, when processes
 * share the store (PostgreSQL), over NOTIFY, so a stream served by any server follows a job another
 * process works and a cancel reaches the process working it. Only the kind and the id travel.
 */
import "server-only";
import { EventEmitter } from "node:events";
import { dialect } from "@/db/dialect";
import { publish, subscribe } from "@/lib/cluster/notify";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";

const progressChannel = "turnscope_job_progress";
const cancelChannel = "turnscope_job_cancel";

const bus = processSingleton("jobs.events", () => {
  const e = new EventEmitter();
  e.setMaxListeners(0);
  return e;
});

/** The payload of both channels: which job. */
const jobOf = (payload: unknown): { kind: string; id: number } | null =>
  Array.isArray(payload) && typeof payload[0] === "string" && typeof payload[1] === "number" ? { kind: payload[0], id: payload[1] } : null;

async function send(channel: string, kind: string, id: number): Promise<void> {
  await publish(channel, [kind, id]).catch((err: unknown) => log.warn("jobs: notification not sent", { channel, kind, id, err }));
}

/** Say that a job changed, here and in every other process. */
export function announce(kind: string, id: number): void {
  bus.emit(`${kind} ${id}`);
  if (dialect.queuesRuns) void send(progressChannel, kind, id);
}

/** Call `onChange` whenever the job changes, here or in another process; resolves to the unsubscribe. */
export async function follow(kind: string, id: number, onChange: () => void): Promise<() => void> {
  const local = `${kind} ${id}`;
  bus.on(local, onChange);
  let offCluster: (() => Promise<void>) | null = null;
  if (dialect.queuesRuns) {
    offCluster = await subscribe(progressChannel, (payload) => {
      const job = jobOf(payload);
      if (job?.kind === kind && job.id === id) onChange();
    }).catch((err: unknown) => {
      log.warn("jobs: cannot follow other processes; polling only", { kind, err });
      return null;
    });
  }
  return () => {
    bus.off(local, onChange);
    void offCluster?.();
  };
}

/** Tell every process that a job of `kind` was cancelled (its row already says so). */
export const publishCancel = (kind: string, id: number): Promise<void> => send(cancelChannel, kind, id);

/** On a shared store, call `onCancel` for each job of `kind` another process cancelled; a no-op on SQLite. */
export async function onCancelElsewhere(kind: string, onCancel: (id: number) => void): Promise<void> {
  if (!dialect.queuesRuns) return;
  await subscribe(cancelChannel, (payload) => {
    const job = jobOf(payload);
    if (job?.kind === kind) onCancel(job.id);
  }).catch((err: unknown) => log.warn("jobs: cancels of other processes are heard at lease renewal only", { kind, err }));
}
