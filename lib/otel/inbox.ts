/**
 * The trace inbox (SQLite): an export is answered once it is decoded and written to a file beside the
 * database (lib/otel/store-export.ts `spoolExportOnThread`), and its spans are stored from there in the
 * background, one file at a time, on an input-pool thread that no exporter waits for. So an exporter waits
 * for decoding only — not for SQLite's one writer, which the run in progress and the rebuilds share, nor
 * for the store's ~50 µs a span — and a crash loses nothing it was told was taken: the next start stores
 * what the inbox holds (a file stored twice inserts nothing the second time: spans are keyed).
 *
 * Bounded by OTEL_INBOX_MAX_BYTES: past it (the store fell behind the exports) an export is stored before
 * it is answered, as with the inbox off (0), so the exporters slow down to what the store takes.
 * A file that cannot be read as an export is moved to `failed/` in the inbox and logged, never dropped;
 * one that cannot be stored now (the writer busy past its time) stays and is tried again by the inbox's
 * periodic pass (lib/jobs `definePeriodic`, every second, started with the server).
 */
import "server-only";
import fs from "node:fs";
import path from "node:path";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { runOffLoop } from "@/lib/input-pool";
import { definePeriodic } from "@/lib/jobs";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { decodeExportBody } from "./decode";
import { INBOX_SUFFIX, inboxDir, readInboxFile, spanRows, type StoreSpooledTask, type StoredExport } from "./store-export";
import { storeSpans } from "@/db/repositories/otel";
import type { ThreadStore } from "@/db/sqlite-thread-store";

/** How often the inbox is looked at besides each export put there: a file a store left for a reason of the moment is tried again. */
const PASS_EVERY_MS = 1_000;

const state = processSingleton("otel.inbox", () => ({
  /** Bytes in the inbox folders this process knows of (what it wrote, and what it found at start). */
  bytes: new Map<string, number>(),
  running: undefined as Promise<void> | undefined,
  /** The inboxes to store next (one per database file: tests switch files), with the store each writes to. */
  asked: new Map<string, ThreadStore>(),
  /** Every inbox this process has stored into, for the periodic pass. */
  known: new Map<string, ThreadStore>(),
  /** What to do with what an inbox file's store did (lib/otel/ingest.ts: schedule the rebuilds). */
  stored: (_stored: StoredExport): unknown => undefined,
}));

/** What the inbox calls once a file is stored (lib/otel/ingest.ts: schedule the rebuild of the conversations it touched). */
export function onInboxStored(stored: (s: StoredExport) => unknown): void {
  state.stored = stored;
}

/** The export files waiting in `dir`, oldest first. */
export function inboxFiles(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith(INBOX_SUFFIX)).sort();
}

function pendingBytes(dir: string): number {
  let bytes = state.bytes.get(dir);
  if (bytes === undefined) {
    bytes = 0;
    for (const name of inboxFiles(dir)) bytes += fs.statSync(path.join(dir, name), { throwIfNoEntry: false })?.size ?? 0;
    state.bytes.set(dir, bytes);
  }
  return bytes;
}

/** Whether an export of `bytes` may go to the inbox of `dir` now (OTEL_INBOX_MAX_BYTES). */
export function inboxHasRoom(dir: string, bytes: number): boolean {
  const max = getConfig().OTEL_INBOX_MAX_BYTES;
  return max > 0 && pendingBytes(dir) + bytes <= max;
}

/** An export was written to the inbox of `dir` (`bytes` long): store it soon. */
export function spooled(dir: string, store: ThreadStore, bytes: number): void {
  state.bytes.set(dir, pendingBytes(dir) + bytes);
  kickInbox(dir, store);
}

/** Store what the inbox of `dir` holds, in the background (at start, and after each export put there). */
export function kickInbox(dir: string, store: ThreadStore): void {
  state.known.set(dir, store);
  state.asked.set(dir, store);
  if (state.running) return;
  state.running = (async () => {
    try {
      while (state.asked.size) {
        const [[next, into]] = state.asked;
        state.asked.delete(next);
        await storeAll(next, into);
      }
    } finally {
      state.running = undefined;
    }
  })();
}

/** Resolves once the inbox work in progress (and what it was asked to do meanwhile) is done: tests, shutdown. */
export async function drainInbox(): Promise<void> {
  while (state.running) await state.running;
}

async function storeAll(dir: string, store: ThreadStore): Promise<void> {
  for (;;) {
    const names = inboxFiles(dir);
    if (!names.length) return;
    for (const name of names) {
      if (!(await storeOne(dir, name, store))) {
        // Tried again by the next pass (`inboxPass`): whatever kept it from being stored (SQLite busy past its time) may have passed.
        return;
      }
    }
  }
}

/** Store one inbox file: true when it is done with (stored, or moved aside as unreadable). */
async function storeOne(dir: string, name: string, store: ThreadStore): Promise<boolean> {
  const file = path.join(dir, name);
  const size = fs.statSync(file, { throwIfNoEntry: false })?.size;
  if (size === undefined) return true; // another process stored it
  const config = getConfig();
  const task: StoreSpooledTask = { file, store, compress: config.OTEL_SPAN_COMPRESSION === "on", limits: { maxBytes: config.OTEL_MAX_BODY_BYTES, maxDepth: config.MAX_JSON_DEPTH } };
  try {
    const stored = await runOffLoop<StoredExport | Promise<StoredExport>>(
      "storeSpooled",
      task,
      { ms: config.OTEL_DECODE_TIMEOUT_MS, setting: "OTEL_DECODE_TIMEOUT_MS", what: "Decoding an export of the trace inbox" },
      () => storeInProcess(task),
      undefined,
      { background: true },
    );
    state.stored(await stored);
  } catch (error) {
    if (!(error instanceof AppError) || error.code === "unavailable") {
      log.warn("a trace inbox file could not be stored now; trying again", { file: name, reason: String((error as Error).message).split("\n")[0].slice(0, 200) });
      return false;
    }
    // It was decoded before it was answered, so this is a file changed or damaged since: kept aside, never dropped.
    const failed = path.join(dir, "failed");
    fs.mkdirSync(failed, { recursive: true });
    fs.renameSync(file, path.join(failed, name));
    log.error("a trace inbox file could not be read as an export; moved aside", { file: path.join("failed", name), reason: error.message.slice(0, 200) });
  }
  state.bytes.set(dir, Math.max(0, pendingBytes(dir) - size));
  return true;
}

/** Where threads cannot start: the file decoded and its spans stored on this process. */
async function storeInProcess(task: StoreSpooledTask): Promise<StoredExport> {
  const { userId, body } = readInboxFile(task.file, task.limits);
  const decoded = decodeExportBody(body);
  const rows = spanRows(decoded.spans);
  const result = rows.length ? await storeSpans(userId, rows, { compress: task.compress }) : { inserted: 0, duplicates: 0, conversationIds: [] };
  fs.rmSync(task.file, { force: true });
  return { accepted: result.inserted, duplicates: result.duplicates, rejected: decoded.rejected, conversationIds: result.conversationIds };
}

/**
 * Resolves true once every export the inbox held when called is stored, false if that takes longer than `ms`.
 * The online rules' sweep waits for it: a conversation whose latest spans are still in the inbox is not finished.
 */
export async function inboxCaughtUp(ms: number): Promise<boolean> {
  const waiting = [...state.bytes.keys()].flatMap((dir) => inboxFiles(dir).map((name) => path.join(dir, name)));
  const until = performance.now() + ms;
  for (;;) {
    while (waiting.length && !fs.existsSync(waiting[0])) waiting.shift();
    if (!waiting.length) return true;
    if (performance.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The background pass (lib/jobs): every inbox known that holds files is stored, and what failed is tried again. */
const inboxPass = definePeriodic("otel.inbox-pass", {
  everyMs: () => PASS_EVERY_MS,
  pass: async () => {
    for (const [dir, store] of state.known) if (inboxFiles(dir).length) kickInbox(dir, store);
    await drainInbox();
  },
  failed: "trace inbox pass failed",
});

/** Stop the background pass (tests); what the inbox holds stays for the next start. */
export async function stopInboxPass(): Promise<void> {
  await inboxPass.stop();
}

/** At start: what a stopped process left in the inbox is stored now (and half-written files it left are removed); then a pass every second. */
export function storeWaitingExports(store: ThreadStore): void {
  const dir = inboxDir(store.file);
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  // A file still under its temporary name was never answered: its exporter sends it again.
  const stale = Date.now() - 60_000;
  for (const name of names.filter((n) => n.endsWith(".tmp"))) {
    const file = path.join(dir, name);
    if ((fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < stale) fs.rmSync(file, { force: true });
  }
  pendingBytes(dir);
  state.known.set(dir, store);
  if (inboxFiles(dir).length) kickInbox(dir, store);
  inboxPass.start();
}
