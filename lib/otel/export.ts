/**
 * Verdicts back onto the traces (issue 53.2): every cell a run saves in this process, for a conversation
 * that came in over OTLP (or any conversation with OTEL_EVALUATION_SCOPE=all), is sent to
 * OTEL_EVALUATION_ENDPOINT as the OpenTelemetry GenAI conventions describe an evaluation: a span named
 * `gen_ai.evaluation.result`, a child of the span that made what was judged (same trace id), carrying
 * `gen_ai.evaluation.name`, `gen_ai.evaluation.score.value`, `gen_ai.evaluation.score.label` and
 * `gen_ai.evaluation.explanation` (and `error.type` for a cell that failed), with the same attributes on a
 * `gen_ai.evaluation.result` event of that span for back ends that read events.
 *
 * The OpenTelemetry SDK does the sending: a BatchSpanProcessor (batched, off the run's path) over the OTLP
 * protobuf exporter (retries 429/502/503/504 with backoff). A run never waits for it: a cell is queued
 * in memory, its trace ids are read in groups a moment later, and when OTEL_EVALUATION_QUEUE cells wait
 * the newest are dropped and counted. Off unless OTEL_EVALUATION_ENDPOINT is set.
 */
import "server-only";
import { createHash, randomBytes } from "node:crypto";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { traceContextsOf, type CellToTrace, type TraceContext } from "@/db/repositories/evaluation-export";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";
import { onResultSaved, type SavedCell } from "@/lib/runner/events";
import { version as VERSION } from "@/lib/version";

export type EvaluationExportCounts = { enabled: boolean; endpoint: string | null; queued: number; exported: number; failed: number; dropped: number; skipped: number };

const state = processSingleton("otel.evaluation-export", () => ({
  started: false,
  waiting: [] as SavedCell[],
  timer: undefined as ReturnType<typeof setTimeout> | undefined,
  inFlight: 0,
  counts: { exported: 0, failed: 0, dropped: 0, skipped: 0 },
  provider: undefined as BasicTracerProvider | undefined,
  unsubscribe: undefined as (() => void) | undefined,
}));

/** What the exporter has done in this process (GET /api/otel/evaluation-export). */
export function evaluationExportCounts(): EvaluationExportCounts {
  const cfg = getConfig();
  return { enabled: Boolean(cfg.OTEL_EVALUATION_ENDPOINT), endpoint: cfg.OTEL_EVALUATION_ENDPOINT ?? null, queued: state.waiting.length + state.inFlight, ...state.counts };
}

/** The exporter's batches counted as the collector answers them. */
class CountingExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      state.inFlight -= spans.length;
      if (result.code === ExportResultCode.SUCCESS) state.counts.exported += spans.length;
      else {
        state.counts.failed += spans.length;
        log.warn("evaluation export failed", { spans: spans.length, error: result.error?.message });
      }
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** `k=v,k2=v2` (values URL-encoded), as OTEL_EXPORTER_OTLP_HEADERS is written. */
function headersOf(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at > 0) out[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return out;
}

/** Start exporting this process's saved cells when OTEL_EVALUATION_ENDPOINT is set (at boot; idempotent). */
export function startEvaluationExport(): void {
  const cfg = getConfig();
  if (state.started || !cfg.OTEL_EVALUATION_ENDPOINT) return;
  state.started = true;
  const exporter = new CountingExporter(new OTLPTraceExporter({ url: cfg.OTEL_EVALUATION_ENDPOINT, headers: headersOf(cfg.OTEL_EVALUATION_HEADERS) }));
  state.provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "turnscope", "service.version": VERSION }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: cfg.OTEL_EVALUATION_QUEUE, maxExportBatchSize: 256, scheduledDelayMillis: 500 })],
  });
  state.unsubscribe = onResultSaved((cell) => {
    if (state.waiting.length + state.inFlight >= cfg.OTEL_EVALUATION_QUEUE) {
      state.counts.dropped++;
      return;
    }
    state.waiting.push(cell);
    if (!state.timer) {
      state.timer = setTimeout(() => void drain(), 100);
      state.timer.unref?.();
    }
  });
}

/** Send what is queued now and wait until the collector answered (tests, shutdown). */
export async function flushEvaluationExport(): Promise<void> {
  if (state.timer) clearTimeout(state.timer);
  state.timer = undefined;
  await drain();
  await state.provider?.forceFlush();
}

/** Stop exporting (tests): what is queued is sent first. */
export async function stopEvaluationExport(): Promise<void> {
  state.unsubscribe?.();
  await flushEvaluationExport().catch(() => undefined);
  await state.provider?.shutdown().catch(() => undefined);
  Object.assign(state, { started: false, waiting: [], timer: undefined, inFlight: 0, provider: undefined, unsubscribe: undefined, counts: { exported: 0, failed: 0, dropped: 0, skipped: 0 } });
}

async function drain(): Promise<void> {
  state.timer = undefined;
  while (state.waiting.length) {
    const group = state.waiting.splice(0, 500);
    state.inFlight += group.length;
    let contexts: Map<string, TraceContext>;
    try {
      contexts = await traceContextsOf(group.map(toLookup));
    } catch (error) {
      state.inFlight -= group.length;
      state.counts.failed += group.length;
      log.warn("evaluation export: reading trace ids failed", { error });
      continue;
    }
    const all = getConfig().OTEL_EVALUATION_SCOPE === "all";
    for (const cell of group) {
      const found = contexts.get(keyOf(cell));
      const context = found ?? (all ? syntheticContext(cell.conversationId) : undefined);
      if (!context) {
        state.inFlight--;
        state.counts.skipped++;
        continue;
      }
      emitSpan(cell, context);
    }
  }
}

const keyOf = (c: Pick<SavedCell, "entityType" | "entityId">) => `${c.entityType}:${c.entityId}`;
const toLookup = (c: SavedCell): CellToTrace => ({ entityType: c.entityType, entityId: c.entityId, conversationId: c.conversationId, messageId: c.messageId, stepId: c.stepId });

/** A conversation that came with no trace: one trace of its own, the same for all its cells. */
function syntheticContext(conversationId: number): TraceContext {
  const hash = createHash("sha256").update(`turnscope:conversation:${conversationId}`).digest("hex");
  return { traceId: hash.slice(0, 32), spanId: hash.slice(32, 48), traced: false };
}

/** The GenAI evaluation attributes of a saved cell. */
export function evaluationAttributes(cell: SavedCell): Attributes {
  const attributes: Attributes = { "gen_ai.evaluation.name": cell.metricName, "turnscope.metric.id": cell.metricId, "turnscope.execution.id": cell.executionId, "turnscope.entity.type": cell.entityType, "turnscope.entity.id": cell.entityId, "turnscope.conversation.id": cell.conversationId };
  const result = cell.result && typeof cell.result === "object" && !Array.isArray(cell.result) ? (cell.result as Record<string, unknown>) : {};
  if (cell.status === "failed") attributes["error.type"] = (cell.error ?? "failed").slice(0, 200);
  if (typeof cell.score === "number" && Number.isFinite(cell.score)) attributes["gen_ai.evaluation.score.value"] = cell.score;
  const label = cell.status === "skipped" ? "skipped" : typeof result.value === "boolean" ? (result.value ? "pass" : "fail") : typeof result.value === "string" && result.value.length <= 100 ? result.value : undefined;
  if (label !== undefined) attributes["gen_ai.evaluation.score.label"] = label;
  if (typeof result.reasoning === "string" && result.reasoning) attributes["gen_ai.evaluation.explanation"] = result.reasoning.slice(0, 4000);
  if (cell.model) attributes["gen_ai.request.model"] = cell.model;
  return attributes;
}

function emitSpan(cell: SavedCell, context: TraceContext): void {
  const provider = state.provider;
  if (!provider) {
    state.inFlight--;
    return;
  }
  const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId: context.traceId, spanId: context.spanId ?? randomBytes(8).toString("hex"), traceFlags: TraceFlags.SAMPLED, isRemote: true });
  const attributes = evaluationAttributes(cell);
  const at = new Date(cell.createdAt);
  const span = provider.getTracer("turnscope.evaluation", VERSION).startSpan("gen_ai.evaluation.result", { kind: SpanKind.INTERNAL, startTime: at, attributes }, parent);
  span.addEvent("gen_ai.evaluation.result", attributes, at);
  if (cell.status === "failed") span.setStatus({ code: SpanStatusCode.ERROR, message: cell.error ?? "failed" });
  span.end(at);
}
