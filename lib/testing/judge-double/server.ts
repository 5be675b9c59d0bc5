/**
 * Judge TEST DOUBLE — an OpenAI-compatible HTTP server for tests and demos.
 *
 * No language model is reachable where Turnscope is tested, so the real
 * `@ai-sdk/openai` client is pointed at this double instead. It implements just
 * enough of the chat-completions API (plus /v1/models) to be indistinguishable
 * from a chat-only server such as vLLM or Ollama, and can be scripted — in
 * process or over `/__double/*` admin endpoints — to misbehave on demand.
 * It is never a judge: every verdict it returns is canned or synthesised.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { z } from "zod";
import { contentReply } from "./content";
import { nearestExample } from "./examples";
import {
  DEFAULT_PLAIN_TEXT, GENERIC_JSON_VERDICT, INVALID_BODY, MALFORMED_CONTENT,
  behaviourListSchema, behaviourSchema, faultsSchema, latencySchema, ruleListSchema,
  drawFault, findMarkerVerdict, messagesText, mulberry32, pickLatency, synthesiseFromSchema,
  type Behaviour, type BehaviourKind, type FaultMix, type Latency, type Rule,
} from "./behaviours";

export type { Behaviour, BehaviourKind, FaultMix, Latency, Rule } from "./behaviours";

export interface JudgeDoubleOptions {
  port?: number;
  host?: string;
  defaultBehaviour?: Behaviour;
  faults?: FaultMix;
  seed?: number;
  latencyMs?: Latency;
  /** When set, /v1/* answers 401 unless `Authorization: Bearer <requireApiKey>`. */
  requireApiKey?: string;
  /**
   * Bill a reply whose client went away while it was being prepared (during its latency), as a provider
   * that finishes an abandoned request bills it: a hedged call's loser, a call aborted at a time limit.
   * Off by default: the reply is then neither sent nor billed.
   */
  billAbandoned?: boolean;
  logger?: (line: string) => void;
}

export type BehaviourSource = "queue" | "examples" | "rule" | "fault" | "marker" | "default";

export interface RecordedRequest {
  at: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  /** Null for non-chat requests and requests rejected before a behaviour was chosen. */
  behaviour: BehaviourKind | null;
  source: BehaviourSource | null;
  /** Null while in flight, and forever for hangs and client aborts. */
  status: number | null;
  /** When the response ended or the client closed the connection (a hang ends only so); null while open. */
  closedAt: string | null;
}

export interface JudgeDoubleStats {
  count: number;
  inFlight: number;
  /** Most requests open at once among those received since the last reset (see `open()`). */
  peakInFlight: number;
  byKind: Partial<Record<BehaviourKind, number>>;
  /** Tokens of the replies the double answered with usage (what a provider bills), summed since the last reset. */
  billed: { prompt_tokens: number; completion_tokens: number; replies: number };
}

export interface JudgeDouble {
  url: string;
  baseURL: string;
  port: number;
  enqueue(...behaviours: Behaviour[]): void;
  addRule(rule: Rule): void;
  /** Also re-seeds the fault PRNG (to `seed`, else the start-up seed) for reproducible runs. */
  setFaults(mix: FaultMix | null, seed?: number): void;
  setDefault(behaviour: Behaviour): void;
  setLatency(latency: Latency): void;
  reset(): void;
  readonly requests: RecordedRequest[];
  count(): number;
  /** Every chat request open now, an earlier test's included: 0 once all are closed. */
  inFlight(): number;
  /**
   * Chat requests received since the last reset and still open. Unlike `inFlight()`, a call an earlier
   * test aborted whose close the double has not yet heard (a busy machine delays it) is not among them.
   */
  open(): number;
  stats(): JudgeDoubleStats;
  /**
   * Start counting `stats().peakInFlight` again from the calls open now: a test reads the most calls open
   * at once over a stretch as the double recorded it on each arrival, never by sampling `open()`.
   */
  resetPeak(): void;
  /** Each billed reply's tokens, in the order the replies were sent, since the last reset. */
  billedReplies(): Array<{ prompt_tokens: number; completion_tokens: number }>;
  close(): Promise<void>;
}

type ChatBody = Record<string, unknown> & { messages: unknown[] };

const DEFAULT_MODEL = "gpt-4o-mini";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isGone(res: http.ServerResponse): boolean {
  return res.destroyed || res.writableEnded;
}

function sendJson(res: http.ServerResponse, status: number, payload: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  if (isGone(res)) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(payload));
}

/** OpenAI's error envelope, so client SDKs surface the message and type as they would in production. */
function sendError(res: http.ServerResponse, status: number, message: string, type: string, code: string | null, headers?: http.OutgoingHttpHeaders): void {
  sendJson(res, status, { error: { message, type, param: null, code } }, headers);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJson(raw: string): { ok: true; value: unknown } | { ok: false } {
  try { return { ok: true, value: JSON.parse(raw) }; } catch { return { ok: false }; }
}

function redactHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const value = Array.isArray(v) ? v.join(", ") : (v ?? "");
    out[k] = k === "authorization" ? (/^bearer\s/i.test(value) ? "Bearer ***" : "***") : k === "api-key" ? "***" : value;
  }
  return out;
}

function newRecord(req: http.IncomingMessage, path: string): RecordedRequest {
  const base = { at: new Date().toISOString(), method: req.method ?? "GET", path, headers: redactHeaders(req.headers) };
  return { ...base, body: undefined, behaviour: null, source: null, status: null, closedAt: null };
}

function tokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

function defaultContent(body: ChatBody): string {
  const rf = body.response_format;
  if (isRecord(rf) && rf.type === "json_schema") {
    const schema = isRecord(rf.json_schema) ? rf.json_schema.schema : undefined;
    return JSON.stringify(schema === undefined ? GENERIC_JSON_VERDICT : synthesiseFromSchema(schema));
  }
  if (isRecord(rf) && rf.type === "json_object") return JSON.stringify(GENERIC_JSON_VERDICT);
  return DEFAULT_PLAIN_TEXT;
}

/** Splits into a handful of pieces so clients genuinely assemble a multi-delta stream. */
function splitForStream(content: string): string[] {
  const size = Math.max(1, Math.ceil(content.length / 5));
  return content.match(new RegExp(`[\\s\\S]{1,${size}}`, "g")) ?? [];
}

export async function startJudgeDouble(options: JudgeDoubleOptions = {}): Promise<JudgeDouble> {
  const host = options.host ?? "127.0.0.1";
  const startSeed = options.seed ?? 42;
  const startDefault: Behaviour = options.defaultBehaviour ?? { kind: "default" };
  const startLatency: Latency = options.latencyMs ?? 0;

  let queue: Behaviour[] = [];
  let rules: { rule: Rule; remaining: number | undefined }[] = [];
  let faults: FaultMix | null = options.faults ?? null;
  // Separate streams so configuring latency never shifts the fault sequence.
  let faultRand = mulberry32(startSeed);
  let latencyRand = mulberry32(startSeed ^ 0x5bd1e995);
  let defaultBehaviour = startDefault;
  let latency = startLatency;
  const requests: RecordedRequest[] = [];
  let received = 0;
  let inFlight = 0;
  /** Open requests of the current reset's epoch; a request's close counts down only in its own epoch. */
  let open = 0;
  let epoch = 0;
  let peakInFlight = 0;
  let byKind: Partial<Record<BehaviourKind, number>> = {};
  let completionSeq = 0;

  function choose(text: string): { behaviour: Behaviour; source: BehaviourSource } {
    const queued = queue.shift();
    if (queued) return { behaviour: queued, source: "queue" };
    // A prompt with alignment examples is answered like its nearest example (examples.ts).
    const example = nearestExample(text);
    if (example) return { behaviour: { kind: "verdict", body: example.verdict }, source: "examples" };
    for (const entry of rules) {
      const { match } = entry.rule;
      // search() ignores lastIndex, so /g or /y flags cannot make matching stateful.
      const hit = typeof match === "string" ? text.includes(match) : text.search(match) !== -1;
      if (!hit) continue;
      if (entry.remaining !== undefined && --entry.remaining <= 0) rules = rules.filter((r) => r !== entry);
      return { behaviour: entry.rule.behaviour, source: "rule" };
    }
    if (faults) {
      const fault = drawFault(faults, faultRand);
      if (fault) return { behaviour: fault, source: "fault" };
    }
    const marker = findMarkerVerdict(text);
    if (marker) return { behaviour: { kind: "verdict", body: marker.value }, source: "marker" };
    return { behaviour: defaultBehaviour, source: "default" };
  }

  /** Resolves false if the client went away (or the double closed) during the wait. */
  function wait(ms: number, res: http.ServerResponse): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(!isGone(res));
    // close() destroys every socket, which fires "close" here, so no timer outlives the double.
    return new Promise((resolve) => {
      const onClose = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        res.off("close", onClose);
        resolve(!isGone(res));
      }, ms);
      res.once("close", onClose);
    });
  }

  let billed = { prompt_tokens: 0, completion_tokens: 0, replies: 0 };
  let billedEach: Array<{ prompt_tokens: number; completion_tokens: number }> = [];
  function bill(prompt: number, completion: number): void {
    billed = { prompt_tokens: billed.prompt_tokens + prompt, completion_tokens: billed.completion_tokens + completion, replies: billed.replies + 1 };
    billedEach.push({ prompt_tokens: prompt, completion_tokens: completion });
  }

  function sendToolCalls(res: http.ServerResponse, body: ChatBody, behaviour: Extract<Behaviour, { kind: "tool_calls" }>): number {
    const id = `chatcmpl-judgedouble-${++completionSeq}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === "string" ? body.model : DEFAULT_MODEL;
    const toolCalls = behaviour.calls.map((c, i) => ({
      id: c.id ?? `call_${completionSeq}_${i}`,
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
    const content = behaviour.content ?? null;
    const promptTokens = tokens(messagesText(body.messages).length);
    const completionTokens = tokens(JSON.stringify(toolCalls).length + (content?.length ?? 0));
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    bill(promptTokens, completionTokens);
    if (body.stream !== true) {
      const choice = { index: 0, message: { role: "assistant", content, tool_calls: toolCalls, refusal: null }, logprobs: null, finish_reason: "tool_calls" };
      sendJson(res, 200, { id, object: "chat.completion", created, model, system_fingerprint: "fp_judge_double", choices: [choice], usage });
      return 200;
    }
    const base = { id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_judge_double" };
    const event = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const chunk = (delta: object, finish: string | null) => event({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    chunk({ role: "assistant", content: content ?? "" }, null);
    chunk({ tool_calls: toolCalls.map((t, index) => ({ index, ...t })) }, null);
    chunk({}, "tool_calls");
    if (isRecord(body.stream_options) && body.stream_options.include_usage === true) event({ ...base, choices: [], usage });
    res.end("data: [DONE]\n\n");
    return 200;
  }

  function sendCompletion(res: http.ServerResponse, body: ChatBody, content: string): number {
    const id = `chatcmpl-judgedouble-${++completionSeq}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === "string" ? body.model : DEFAULT_MODEL;
    const promptTokens = tokens(messagesText(body.messages).length);
    const completionTokens = tokens(content.length);
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    bill(promptTokens, completionTokens);
    if (body.stream !== true) {
      const choice = { index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" };
      sendJson(res, 200, { id, object: "chat.completion", created, model, system_fingerprint: "fp_judge_double", choices: [choice], usage });
      return 200;
    }
    const base = { id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_judge_double" };
    const event = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const chunk = (delta: object, finish: string | null) =>
      event({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    chunk({ role: "assistant", content: "" }, null);
    for (const piece of splitForStream(content)) chunk({ content: piece }, null);
    chunk({}, "stop");
    if (isRecord(body.stream_options) && body.stream_options.include_usage === true) event({ ...base, choices: [], usage });
    res.end("data: [DONE]\n\n");
    return 200;
  }

  function respond(res: http.ServerResponse, body: ChatBody, behaviour: Behaviour): number | null {
    switch (behaviour.kind) {
      case "hang":
        // Deliberately never answered; close() destroys the socket, so nothing leaks.
        return null;
      case "rate_limit":
        sendError(res, 429, "Rate limit reached (judge test double).", "rate_limit_exceeded", "rate_limit_exceeded", {
          "retry-after": String(behaviour.retryAfterSeconds ?? 1),
        });
        return 429;
      case "server_error": {
        const status = behaviour.status ?? 500;
        sendError(res, status, "The server had an error while processing your request (judge test double).", "server_error", null);
        return status;
      }
      case "http_error": {
        const type = behaviour.status >= 500 ? "server_error" : "invalid_request_error";
        const code = behaviour.status === 401 ? "invalid_api_key" : null;
        sendError(res, behaviour.status, behaviour.message ?? `HTTP ${behaviour.status} from the judge test double.`, type, code);
        return behaviour.status;
      }
      case "invalid_body":
        if (!isGone(res)) {
          res.writeHead(200, { "content-type": body.stream === true ? "text/event-stream" : "application/json" });
          res.end(body.stream === true ? `data: ${INVALID_BODY}\n\n` : INVALID_BODY);
        }
        return 200;
      case "verdict":
        return sendCompletion(res, body, JSON.stringify(behaviour.body) ?? "null");
      case "text":
        return sendCompletion(res, body, behaviour.content);
      case "tool_calls":
        return sendToolCalls(res, body, behaviour);
      case "malformed":
        return sendCompletion(res, body, MALFORMED_CONTENT);
      case "default":
        return sendCompletion(res, body, defaultContent(body));
      case "content":
        return sendCompletion(res, body, contentReply(body));
    }
  }

  function authorised(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    if (options.requireApiKey === undefined) return true;
    if (req.headers.authorization === `Bearer ${options.requireApiKey}`) return true;
    sendError(res, 401, "Incorrect API key provided (judge test double).", "invalid_request_error", "invalid_api_key");
    return false;
  }

  async function handleChat(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> {
    received++;
    inFlight++;
    open++;
    peakInFlight = Math.max(peakInFlight, open);
    const record = newRecord(req, path);
    const since = epoch;
    res.once("close", () => {
      inFlight--;
      if (since === epoch) open--;
      record.closedAt = new Date().toISOString();
    });
    requests.push(record);
    const raw = await readBody(req);
    const parsed = parseJson(raw);
    record.body = parsed.ok ? parsed.value : raw;
    if (!authorised(req, res)) {
      record.status = 401;
      return;
    }
    if (!parsed.ok || !isRecord(parsed.value) || !Array.isArray(parsed.value.messages)) {
      record.status = 400;
      return sendError(res, 400, "Request body must be JSON with a 'messages' array.", "invalid_request_error", null);
    }
    const body: ChatBody = { ...parsed.value, messages: parsed.value.messages };
    const { behaviour, source } = choose(messagesText(body.messages));
    record.behaviour = behaviour.kind;
    record.source = source;
    byKind[behaviour.kind] = (byKind[behaviour.kind] ?? 0) + 1;
    const delay = behaviour.latencyMs ?? pickLatency(latency, latencyRand);
    if (!(await wait(delay, res))) {
      if (options.billAbandoned && !closing) {
        try {
          respond(res, body, behaviour); // billed as if answered; nothing reaches the gone client
        } catch {
          // a write to the closed socket: the bill is what matters here
        }
      }
      return;
    }
    record.status = respond(res, body, behaviour);
  }

  function admin<T>(res: http.ServerResponse, raw: string, schema: z.ZodType<T>, apply: (value: T) => void): void {
    const parsed = parseJson(raw);
    if (!parsed.ok) return sendError(res, 400, "Admin body is not valid JSON.", "invalid_request_error", "invalid_admin_body");
    const result = schema.safeParse(parsed.value);
    if (!result.success) {
      const message = result.error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");
      return sendError(res, 400, `Invalid admin body: ${message}`, "invalid_request_error", "invalid_admin_body");
    }
    apply(result.data);
    sendJson(res, 200, { ok: true, ...double.stats() });
  }

  async function handleAdmin(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> {
    const raw = await readBody(req);
    const route = `${req.method} ${path}`;
    switch (route) {
      case "POST /__double/enqueue":
        return admin(res, raw, behaviourListSchema, (list) => double.enqueue(...list));
      case "POST /__double/rules":
        return admin(res, raw, ruleListSchema, (list) => list.forEach((rule) => double.addRule(rule)));
      case "POST /__double/faults":
        return admin(res, raw, faultsSchema, (mix) => {
          const { seed, ...probabilities } = mix ?? {};
          double.setFaults(mix === null ? null : probabilities, seed);
        });
      case "POST /__double/default":
        return admin(res, raw, behaviourSchema, (b) => double.setDefault(b));
      case "POST /__double/latency":
        return admin(res, raw, latencySchema, (l) => double.setLatency(l));
      case "POST /__double/reset":
        double.reset();
        return sendJson(res, 200, { ok: true, ...double.stats() });
      case "GET /__double/requests":
        return sendJson(res, 200, { requests });
      case "GET /__double/stats":
        return sendJson(res, 200, double.stats());
      default:
        return sendError(res, 404, `Unknown admin route: ${route}`, "invalid_request_error", "unknown_url");
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.on("error", () => {}); // a client vanishing mid-write is expected here, not a crash
    const path = new URL(req.url ?? "/", "http://double.invalid").pathname.replace(/\/+$/, "") || "/";
    if (path.startsWith("/__double/")) return handleAdmin(req, res, path);
    if (req.method === "POST" && path === "/v1/chat/completions") return handleChat(req, res, path);
    if (req.method === "GET" && path === "/v1/models") {
      const ok = authorised(req, res);
      requests.push({ ...newRecord(req, path), body: null, status: ok ? 200 : 401 });
      const model = { id: DEFAULT_MODEL, object: "model", created: 1_700_000_000, owned_by: "judge-test-double" };
      return ok ? sendJson(res, 200, { object: "list", data: [model] }) : undefined;
    }
    sendError(res, 404, `Invalid URL (${req.method} ${path}) on the judge test double.`, "invalid_request_error", "unknown_url");
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      sendError(res, 500, `judge test double internal error: ${String(err)}`, "server_error", null);
    });
  });
  // Idle keep-alive sockets outlive their clients' (Node's 5 s default let the double close a socket just
  // as a client reused it: "socket hang up" in a browser test's GET /__double/requests). close() ends them all.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  let closing: Promise<void> | undefined;

  const double: JudgeDouble = {
    url,
    baseURL: `${url}/v1`,
    port,
    enqueue: (...behaviours) => void queue.push(...behaviours),
    addRule: (rule) => void rules.push({ rule, remaining: rule.times }),
    setFaults(mix, seed) {
      faults = mix;
      faultRand = mulberry32(seed ?? startSeed);
    },
    setDefault: (behaviour) => void (defaultBehaviour = behaviour),
    setLatency: (l) => void (latency = l),
    reset() {
      queue = [];
      rules = [];
      faults = null;
      faultRand = mulberry32(startSeed);
      latencyRand = mulberry32(startSeed ^ 0x5bd1e995);
      defaultBehaviour = startDefault;
      latency = startLatency;
      requests.length = 0;
      received = 0;
      epoch++;
      open = 0;
      peakInFlight = 0;
      byKind = {};
      billed = { prompt_tokens: 0, completion_tokens: 0, replies: 0 };
      billedEach = [];
    },
    billedReplies: () => [...billedEach],
    requests,
    count: () => received,
    inFlight: () => inFlight,
    open: () => open,
    resetPeak: () => void (peakInFlight = open),
    stats: () => ({ count: received, inFlight, peakInFlight, byKind: { ...byKind }, billed: { ...billed } }),
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Hanging and keep-alive sockets would otherwise hold close() open indefinitely.
        server.closeAllConnections();
      });
      return closing;
    },
  };
  options.logger?.(`judge test double listening on ${url} (OpenAI baseURL ${url}/v1)`);
  return double;
}
