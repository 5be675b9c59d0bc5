/**
 * Every environment variable Turnscope reads, validated once with zod. The README's settings table and
 * docs/configuration.md list each one with its default (lib/config-docs.test.ts checks both); nothing
 * else in the code reads process.env for configuration.
 */
import { isIP } from "node:net";
import proxyaddr from "proxy-addr";
import { z } from "zod";

const positiveInt = (fallback: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a positive integer")
    .transform(Number)
    .pipe(z.number().int().positive())
    .optional()
    .transform((v) => v ?? fallback);

const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined));

/** Comma-separated IP addresses or CIDR ranges (`10.0.0.0/8`, `fe80::/10`). */
function cidrList(v: string): boolean {
  return v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .every((s) => {
      const [address, bits, extra] = s.split("/");
      const family = isIP(address);
      return family !== 0 && extra === undefined && (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32)));
    });
}

/** OTEL_RETENTION_DAYS_BY_DATASET read: dataset name → days (non-negative), or null when it is not such JSON. */
export function retentionByDataset(text: string): Map<string, number> | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const out = new Map<string, number>();
  for (const [name, days] of Object.entries(raw)) {
    if (typeof days !== "number" || !Number.isFinite(days) || days < 0) return null;
    out.set(name, days);
  }
  return out;
}

/** Exported for lib/config-docs.test.ts, which holds the documentation to these keys and defaults. */
export const envSchema = z.object({
  DATABASE_PATH: z.string().trim().min(1).default("./data/turnscope.db"),
  /** postgres://… selects the PostgreSQL store (db/pg.ts); unset keeps SQLite at DATABASE_PATH. */
  DATABASE_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL (unset it to use SQLite)")
      .optional(),
  ),
  /** Connections the PostgreSQL store keeps open at most (per process). */
  DATABASE_POOL_SIZE: positiveInt(10),
  /**
   * PostgreSQL job queue: seconds a claimed batch of cells stays invisible to other processes without a
   * heartbeat from its process; a batch of a process that died is worked again within ~1.5× this.
   */
  JOB_VISIBILITY_TIMEOUT_SECONDS: positiveInt(60),
  /** PostgreSQL job queue: batches of cells one process (server or `npm run worker`) works at once. */
  WORKER_CONCURRENCY: positiveInt(4),
  /** The admin's key of a single-token setup (signs in as user `admin`); per-user keys are created on the People page. */
  API_TOKEN: optionalText,
  /**
   * Reverse proxies whose `X-Forwarded-For` names the client (comma-separated addresses, CIDR ranges, or
   * `loopback`/`linklocal`/`uniquelocal`). Default none: failed sign-ins are counted per socket address.
   */
  TRUSTED_PROXIES: optionalText.refine(
    (v) => {
      if (!v) return true;
      try {
        proxyaddr.compile(v.split(",").map((s) => s.trim()).filter(Boolean));
        return true;
      } catch {
        return false;
      }
    },
    { message: "must be comma-separated IP addresses or CIDR ranges (or loopback, linklocal, uniquelocal)" },
  ),
  OPENAI_BASE_URL: optionalText.pipe(z.url({ message: "must be a URL such as http://127.0.0.1:11434/v1" }).optional()),
  OPENAI_API_KEY: optionalText,
  JUDGE_MODEL: z.string().trim().min(1).default("gpt-4o-mini"),
  /**
   * The longest a judge call may go unanswered before it is abandoned (and retried), and the limit until
   * the provider's latency is learnt; then the limit is JUDGE_TIMEOUT_P99_MULTIPLE × the observed p99,
   * at least JUDGE_TIMEOUT_FLOOR_MS and at most this (lib/judge/tail.ts).
   */
  JUDGE_TIMEOUT_MS: positiveInt(30_000),
  JUDGE_TIMEOUT_FLOOR_MS: positiveInt(1_000),
  JUDGE_TIMEOUT_P99_MULTIPLE: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, "must be a number of at least 1, such as 3 or 2.5")
    .transform(Number)
    .pipe(z.number().min(1, "must be at least 1"))
    .optional()
    .transform((v) => v ?? 3),
  /** A judge call unanswered past the provider's observed p95 gets a second request; the first answer wins. */
  JUDGE_HEDGE: z
    .enum(["true", "false", "1", "0"], { message: "must be true or false" })
    .optional()
    .transform((v) => v !== "false" && v !== "0"),
  JUDGE_MAX_RETRIES: z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a non-negative integer")
    .transform(Number)
    .optional()
    .transform((v) => v ?? 3),
  /**
   * Retries of a judge call answered 429, counted apart from JUDGE_MAX_RETRIES: a 429 is the provider
   * asking to wait (its Retry-After is honoured), not a fault, so a cell should not fail after three of
   * them when the provider refuses a fifth of calls at random. Unset: 8, or 0 when JUDGE_MAX_RETRIES is 0.
   */
  JUDGE_MAX_RATE_LIMIT_RETRIES: z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a non-negative integer")
    .transform(Number)
    .optional(),
  /** Process-wide ceiling of calls in flight per model. High, so a run gets the batch_size it asks for; a provider's 429s lower the live limit. */
  JUDGE_MAX_CONCURRENCY: positiveInt(128),
  /**
   * Provider calls (the AI SDK's request and reply handling, the HTTP) on a worker thread, off the event
   * loop that saves results and answers readers. `false` keeps them in process.
   */
  JUDGE_THREAD: z
    .enum(["true", "false", "1", "0"], { message: "must be true or false" })
    .optional()
    .transform((v) => v !== "false" && v !== "0"),
  /** JSON object: model name → {input, output} price in USD per million tokens. */
  JUDGE_PRICES: optionalText,
  /** Context window of the judge model in tokens: conversation evidence is cut to fit it. */
  JUDGE_CONTEXT_TOKENS: positiveInt(128_000),
  /** JSON object: model name → context window in tokens, for models that differ from the default. */
  JUDGE_CONTEXT_TOKENS_BY_MODEL: optionalText,
  /**
   * Targets (lib/targets/policy.ts): the environment variables a target header may read as `${env:NAME}`
   * (comma-separated names; default none), the networks a target may not connect to (CIDR ranges,
   * checked on the address connected; default link-local, cloud metadata, unspecified and multicast),
   * the ranges let through anyway, and the largest reply read from a target.
   */
  TARGET_SECRET_ENV: optionalText.refine((v) => !v || v.split(",").every((s) => /^\s*([A-Za-z_][A-Za-z0-9_]*)?\s*$/.test(s)), { message: "must be comma-separated environment variable names" }),
  TARGET_DENY_NETWORKS: z.string().trim().default("0.0.0.0/8,169.254.0.0/16,100.100.100.200/32,224.0.0.0/4,255.255.255.255/32,::/128,fe80::/10,fd00:ec2::254/128,ff00::/8").refine(cidrList, { message: "must be comma-separated IP addresses or CIDR ranges" }),
  TARGET_ALLOW_NETWORKS: optionalText.refine((v) => !v || cidrList(v), { message: "must be comma-separated IP addresses or CIDR ranges" }),
  TARGET_MAX_REPLY_BYTES: positiveInt(8 * 1024 * 1024),
  MAX_IMPORT_BYTES: positiveInt(50 * 1024 * 1024),
  /** Largest JSON request body of any other route (imports and OTLP have their own limits); 413 above it. */
  MAX_JSON_BODY_BYTES: positiveInt(1024 * 1024),
  /** Deepest nesting of arrays and objects in a JSON request body or OTLP JSON export, checked before it is parsed (400 past it). */
  MAX_JSON_DEPTH: positiveInt(128),
  /**
   * The input pool (lib/input-pool.ts): worker threads that read imports and decode OTLP exports off the
   * request loop, and how long one import's reading (decompress, parse, convert, validate) may take
   * before its thread is stopped and the import refused with 422.
   */
  INPUT_WORKERS: positiveInt(2),
  IMPORT_TIMEOUT_MS: positiveInt(60_000),
  /**
   * Time budget of one check cell whose work can grow with the text (regex, JSON, JSON Schema) when it runs
   * on the check thread: past it the thread is stopped and the cell fails saying so.
   */
  CHECK_TIMEOUT_MS: positiveInt(2_000),
  /** Largest OTLP trace export accepted, in bytes, both as sent and after gunzip (413 above it). */
  OTEL_MAX_BODY_BYTES: positiveInt(16 * 1024 * 1024),
  /** How long decoding one OTLP export (gunzip, parse, read its spans) may take on the input pool before it is stopped (422). */
  OTEL_DECODE_TIMEOUT_MS: positiveInt(10_000),
  /**
   * SQLite: the most bytes of exports the trace inbox holds (answered, their spans not stored yet; lib/otel/inbox.ts).
   * Past it an export is stored before it is answered, so exporters slow down to what the store takes; 0: always so.
   */
  OTEL_INBOX_MAX_BYTES: z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a non-negative integer")
    .transform(Number)
    .optional()
    .transform((v) => v ?? 256 * 1024 * 1024),
  /** How long after an export its conversations are rebuilt from their spans, so a burst of exports costs one rebuild. */
  OTEL_ASSEMBLY_DELAY_MS: z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a non-negative integer")
    .transform(Number)
    .optional()
    .transform((v) => v ?? 1000),
  /** How many spans' worth of recently active conversations each process keeps assembled in memory, so a rebuild reads only new spans; 0 keeps none. */
  OTEL_ASSEMBLY_CACHE_SPANS: z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a non-negative integer")
    .transform(Number)
    .optional()
    .transform((v) => v ?? 20_000),
  /**
   * How long the spans of a live conversation are kept after its newest span arrived (lib/otel/retention.ts):
   * then its spans, traces and live record are deleted in the background; the conversation built from them
   * stays. 0 keeps spans for good. `OTEL_RETENTION_DAYS_BY_DATASET`: JSON `{"<dataset name>": days}` overrides.
   */
  OTEL_RETENTION_DAYS: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, "must be a non-negative number of days")
    .transform(Number)
    .optional()
    .transform((v) => v ?? 30),
  /**
   * SQLite only: keep each span's JSON raw-deflated (~2.5x smaller for GenAI spans) at the cost of CPU where
   * exports are stored (~25 us a span) and rebuilt (~8 us): measured, it made the receiver fall behind at
   * 5,000 spans/s on a loaded machine, so it is off unless chosen (docs/performance.md, the trace store).
   */
  OTEL_SPAN_COMPRESSION: z.enum(["on", "off"], { message: "must be on or off" }).default("off"),
  OTEL_RETENTION_DAYS_BY_DATASET: optionalText.refine((v) => v === undefined || retentionByDataset(v) !== null, {
    message: 'must be JSON like {"Support bot": 7, "audit": 0}: dataset names to days (0 keeps spans for good)',
  }),
  /**
   * Verdicts back onto the traces (lib/otel/export.ts): the OTLP/HTTP traces URL saved cells are sent to
   * as GenAI evaluation spans (unset: off), its headers (`k=v,k2=v2`), which conversations (`traced`: those
   * that came over OTLP; `all`: every one), and how many cells may wait before the newest are dropped.
   */
  OTEL_EVALUATION_ENDPOINT: optionalText.pipe(z.url({ message: "must be an OTLP/HTTP traces URL such as http://collector:4318/v1/traces" }).optional()),
  OTEL_EVALUATION_HEADERS: optionalText,
  OTEL_EVALUATION_SCOPE: z.enum(["traced", "all"], { message: "must be traced or all" }).default("traced"),
  OTEL_EVALUATION_QUEUE: positiveInt(10_000),
  /** How often each server process sweeps the online rules for finished live conversations; 0 turns the sweep off. */
  ONLINE_SWEEP_INTERVAL_MS: z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a non-negative integer")
    .optional()
    .transform((v) => (v === undefined ? 5000 : Number(v))),
  /** On SIGTERM, how long cells in flight may finish before the rest are aborted and marked for retry. */
  SHUTDOWN_GRACE_MS: positiveInt(5_000),
  /** With API_TOKEN set: how long a page sign-in lasts before the token must be entered again. */
  SESSION_TTL_HOURS: positiveInt(12),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
});

export type AppConfig = z.infer<typeof envSchema>;

let cached: AppConfig | undefined;

/** The validated configuration; throws one readable error naming every bad variable. */
export function getConfig(): AppConfig {
  if (cached) return cached;
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid configuration in the environment:\n${lines.join("\n")}`);
  }
  cached = parsed.data;
  return cached;
}

/** Forget the cached configuration so the next read sees the current environment (tests only). */
export function resetConfig(): void {
  cached = undefined;
}
