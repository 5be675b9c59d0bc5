/**
 * A production Turnscope server as a child process for the reliability suite: start, SIGKILL,
 * SIGTERM, restart on the same database, with its log lines captured for inspection.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

// The suite runs from the project root (npm scripts do).
const root = process.cwd();

/**
 * `databaseUrl` (PostgreSQL) overrides `databasePath` (SQLite), as DATABASE_URL does for the app. `root`
 * serves another built checkout (a benchmark's baseline commit) instead of this one.
 */
export type ServerOptions = { port: number; databasePath: string; databaseUrl?: string; env?: Record<string, string>; root?: string };

export class TurnscopeServer {
  private child: ChildProcess | undefined;
  readonly logs: string[] = [];
  readonly baseUrl: string;

  constructor(readonly options: ServerOptions) {
    this.baseUrl = `http://127.0.0.1:${options.port}`;
  }

  /** The `next start` process's id while it runs (benchmarks read its memory). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get store(): "sqlite" | "postgres" {
    return this.options.databaseUrl ? "postgres" : "sqlite";
  }

  async start(): Promise<void> {
    // RELIABILITY_NODE_ARGS (e.g. "--cpu-prof") profiles the server under the suite's load.
    const nodeArgs = (process.env.RELIABILITY_NODE_ARGS ?? "").split(" ").filter(Boolean);
    const cwd = this.options.root ?? root;
    const child = spawn(process.execPath, [...nodeArgs, path.join(cwd, "node_modules", "next", "dist", "bin", "next"), "start", "-p", String(this.options.port), "-H", "127.0.0.1", "--keepAliveTimeout", "65000"], {
      cwd,
      env: {
        ...process.env,
        NEXT_TELEMETRY_DISABLED: "1",
        NEXT_MANUAL_SIG_HANDLE: "true",
        DATABASE_PATH: this.options.databasePath,
        // Unset on SQLite (spawn drops undefined values), so an exported DATABASE_URL cannot leak in.
        DATABASE_URL: this.options.databaseUrl,
        LOG_LEVEL: "info",
        ...this.options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) this.logs.push(line);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`server exited at start (code ${child.exitCode}):\n${this.logs.slice(-20).join("\n")}`);
      try {
        const res = await fetch(`${this.baseUrl}/api/health`, { headers: this.authHeaders() });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error("server did not become healthy within 60 s");
  }

  authHeaders(): Record<string, string> {
    const token = this.options.env?.API_TOKEN;
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  /** Send a signal and wait for the process to exit; resolves with the time it took. */
  async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 30_000): Promise<number> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return 0;
    const started = Date.now();
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill(signal);
    const ok = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs))]);
    if (!ok) {
      child.kill("SIGKILL");
      await exited;
      throw new Error(`server did not exit within ${timeoutMs} ms of ${signal}`);
    }
    return Date.now() - started;
  }

  exitInfo(): { code: number | null; signal: NodeJS.Signals | null } {
    return { code: this.child?.exitCode ?? null, signal: this.child?.signalCode ?? null };
  }

  async request(method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any; text: string; headers: Headers; ms: number }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- the suite inspects arbitrary JSON
    const started = performance.now();
    const send = () =>
      fetch(`${this.baseUrl}${urlPath}`, {
        method,
        headers: { ...this.authHeaders(), ...(body !== undefined && !(body instanceof FormData) ? { "content-type": "application/json" } : {}), ...headers },
        body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
      });
    // A read sent on a pooled connection the server closed meanwhile fails before the server saw it: sent
    // again once on a new connection, as any HTTP client does for an idempotent request. Writes are not.
    const res = await send().catch((error: unknown) => {
      const code = String((error as { cause?: { code?: unknown } })?.cause?.code ?? "");
      if ((method === "GET" || method === "HEAD") && ["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"].includes(code)) return send();
      throw error;
    });
    const text = await res.text();
    const ms = performance.now() - started;
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text, headers: res.headers, ms };
  }
}
