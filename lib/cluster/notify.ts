/**
 * Cross-process events over PostgreSQL LISTEN/NOTIFY: every server and worker process connected to
 * one database hears what the others publish (a browser on server A follows cells evaluated on B).
 *
 * One dedicated connection per process listens (a pooled connection cannot: LISTEN belongs to a
 * session); it reconnects with backoff when the server drops it and LISTENs again on every channel.
 * Notifications sent while it was away are lost — NOTIFY keeps no backlog — so onReconnect() tells
 * subscribers to resynchronise from the tables. Publishing goes through the cluster pool.
 *
 * Payloads are JSON and must stay under NOTIFY's 8000-byte limit: send ids, never results.
 */
import "server-only";
import pg from "pg";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { clusterPool, clusterUrl } from "./pool";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type NotifyListener = (payload: unknown) => void;

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more (in the server encoding, UTF-8 here). */
export const maxNotifyPayloadBytes = 7999;

export class NotifyPayloadTooLargeError extends Error {
  constructor(channel: string, bytes: number) {
    super(
      `NOTIFY payload on "${channel}" is ${bytes} bytes; PostgreSQL allows at most ${maxNotifyPayloadBytes}. ` +
        "Publish ids and let listeners read the rows.",
    );
    this.name = "NotifyPayloadTooLargeError";
  }
}

const channelPattern = /^[a-z_][a-z0-9_]{0,62}$/;

function checkChannel(channel: string): void {
  if (!channelPattern.test(channel)) {
    throw new Error(`Invalid notify channel "${channel}": use 1–63 lowercase letters, digits or underscores, not starting with a digit`);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Notifier {
  private readonly listeners = new Map<string, Set<NotifyListener>>();
  private readonly reconnectListeners = new Set<() => void>();
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private closed = false;
  private hadConnection = false;

  constructor(readonly url: string) {}

  /** Send `payload` (JSON) to every subscriber of `channel` in every process, this one included. */
  async publish(channel: string, payload: JsonValue): Promise<void> {
    checkChannel(channel);
    const text = JSON.stringify(payload);
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > maxNotifyPayloadBytes) throw new NotifyPayloadTooLargeError(channel, bytes);
    await clusterPool(this.url).query("select pg_notify($1, $2)", [channel, text]);
  }

  /**
   * Call `listener` with each payload published on `channel`. Resolves once the LISTEN is in place, so
   * a publish issued after it is heard. Returns the function that unsubscribes.
   */
  async subscribe(channel: string, listener: NotifyListener): Promise<() => Promise<void>> {
    checkChannel(channel);
    if (this.closed) throw new Error("Notifier is closed");
    let set = this.listeners.get(channel);
    const first = !set;
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(listener);
    if (first) {
      const client = await this.connection();
      try {
        await client.query(`LISTEN "${channel}"`);
      } catch {
        // The connection went while we asked: the next one LISTENs on every channel of the map.
        await this.connection();
      }
    } else {
      await this.connection();
    }
    return async () => {
      const current = this.listeners.get(channel);
      if (!current?.delete(listener) || current.size > 0) return;
      this.listeners.delete(channel);
      await this.client?.query(`UNLISTEN "${channel}"`).catch(() => undefined);
    };
  }

  /** Called after the listening connection came back: notifications of the gap are lost, resync. */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /** The backend pid of the listening connection (tests terminate it to exercise reconnection). */
  async listenerPid(): Promise<number> {
    const client = await this.connection();
    const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
    return rows[0].pid;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.reconnectListeners.clear();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connectWithRetry().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connectWithRetry(): Promise<pg.Client> {
    let delayMs = 100;
    for (;;) {
      if (this.closed) throw new Error("Notifier is closed");
      try {
        const client = await this.connectOnce();
        if (this.closed) {
          await client.end().catch(() => undefined);
          throw new Error("Notifier is closed");
        }
        this.client = client;
        const reconnected = this.hadConnection;
        this.hadConnection = true;
        if (reconnected) {
          log.info("notify: listening connection restored", { channels: [...this.listeners.keys()] });
          for (const listener of this.reconnectListeners) this.safeCall(() => listener());
        }
        return client;
      } catch (err) {
        if (this.closed) throw err;
        log.warn("notify: cannot connect the listening connection, retrying", { err, retry_in_ms: delayMs });
        await sleep(delayMs);
        delayMs = Math.min(delayMs * 2, 5_000);
      }
    }
  }

  private async connectOnce(): Promise<pg.Client> {
    // TCP keepalive: a listening connection only reads, so without it a peer gone silently (a NAT or
    // firewall dropping the idle flow) would leave it half-open, hearing nothing and never reconnecting.
    const client = new pg.Client({ connectionString: this.url, application_name: "turnscope-notify", keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    client.on("notification", (msg) => this.dispatch(msg.channel, msg.payload));
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      // Keep going while we subscribe: a channel added meanwhile is LISTENed by its subscribe().
      for (const channel of [...this.listeners.keys()]) await client.query(`LISTEN "${channel}"`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return client;
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    if (this.closed) return;
    log.warn("notify: listening connection lost, reconnecting", { err });
    this.connection().catch(() => undefined);
  }

  private dispatch(channel: string, raw: string | undefined): void {
    const set = this.listeners.get(channel);
    if (!set) return;
    let payload: unknown;
    try {
      payload = raw === undefined || raw === "" ? null : JSON.parse(raw);
    } catch {
      log.warn("notify: dropped a payload that is not JSON", { channel });
      return;
    }
    for (const listener of [...set]) this.safeCall(() => listener(payload));
  }

  private safeCall(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      log.error("notify: listener threw", { err });
    }
  }
}

type Notifiers = Map<string, Notifier>;
const notifiers = () => processSingleton<Notifiers>("cluster.notifiers", () => new Map());

/** The process's notifier for `url` (default DATABASE_URL): one listening connection per database. */
export function getNotifier(url?: string): Notifier {
  const chosen = clusterUrl(url);
  const all = notifiers();
  let notifier = all.get(chosen);
  if (!notifier) {
    notifier = new Notifier(chosen);
    all.set(chosen, notifier);
  }
  return notifier;
}

export function publish(channel: string, payload: JsonValue, url?: string): Promise<void> {
  return getNotifier(url).publish(channel, payload);
}

export function subscribe(channel: string, listener: NotifyListener, url?: string): Promise<() => Promise<void>> {
  return getNotifier(url).subscribe(channel, listener);
}

/** Close every notifier of this process (shutdown, tests). */
export async function closeNotifiers(): Promise<void> {
  const all = notifiers();
  const open = [...all.values()];
  all.clear();
  await Promise.all(open.map((n) => n.close()));
}
