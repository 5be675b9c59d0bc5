import { z } from "zod";
import { errorSchema } from "@/lib/schemas/common";
import type { Operation } from "./types";

const tag = "Traces";

const otlpJsonRequest = {
  type: "object",
  description:
    "An OTLP `ExportTraceServiceRequest` in OTLP/JSON: lowerCamelCase field names, trace and span ids as hex strings, enums as integers, " +
    "64-bit integers (times in nanoseconds, `intValue`) as decimal strings.",
  properties: {
    resourceSpans: {
      type: "array",
      items: {
        type: "object",
        properties: {
          resource: { type: "object", properties: { attributes: { type: "array", items: { type: "object" } } } },
          scopeSpans: {
            type: "array",
            items: { type: "object", properties: { scope: { type: "object" }, spans: { type: "array", items: { type: "object" } } } },
          },
        },
      },
    },
  },
};

const exportResponse = {
  type: "object",
  description: "`{}` when every span was taken; `partialSuccess` when some could not be used (the rest were stored).",
  properties: {
    partialSuccess: {
      type: "object",
      properties: {
        rejectedSpans: { type: "integer", description: "Spans not stored: without a valid trace id (32 hex digits) or span id (16 hex digits)" },
        errorMessage: { type: "string", description: "Which spans, and why (the first five)" },
      },
    },
  },
};

const protobufBody = { type: "string", format: "binary", description: "A protobuf-encoded message (opentelemetry-proto v1)" };

export const otelOperations: Operation[] = [
  {
    method: "post",
    path: "/otel/v1/traces",
    operationId: "exportTraces",
    summary: "Receive OpenTelemetry traces (OTLP/HTTP); their GenAI spans become conversations",
    description:
      "The OTLP/HTTP trace endpoint: point an exporter at it with `OTEL_EXPORTER_OTLP_ENDPOINT=<base>/api/otel` (the exporter adds `/v1/traces`) " +
      "and, when the server sets `API_TOKEN`, `OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<token>`. The body is an " +
      "`ExportTraceServiceRequest` as `application/x-protobuf` or `application/json`, optionally `Content-Encoding: gzip`; the 200 answer is an " +
      "`ExportTraceServiceResponse` in the request's content type. A span is identified by its trace and span id: the same span sent again " +
      "(an exporter's retry) changes nothing.\n\n" +
      "Spans are grouped into conversations by `gen_ai.conversation.id`, else `session.id`, else the AI SDK's telemetry metadata `sessionId`, " +
      "else the trace id (a trace belongs to the first conversation one of its spans names). The dataset is the resource attribute " +
      "`turnscope.dataset`, else `service.name` (created on first use, owned by the caller's `X-User-Id`). A conversation's messages are rebuilt " +
      "from all of its spans shortly after they arrive (`OTEL_ASSEMBLY_DELAY_MS`, default 1000 ms), so late and out-of-order spans land in place; " +
      "read them with `GET /conversations/{id}`. What is read: `gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages`, " +
      "`execute_tool` and `invoke_agent` spans, the older `gen_ai.*.message` and `gen_ai.choice` events, and the AI SDK's `ai.prompt.messages`, " +
      "`ai.response.*` and `ai.toolCall.*` attributes (docs/otel.md).\n\n" +
      "Bodies over 64 KB (and gzip bodies that inflate past it) are decoded on the input pool, off the request loop, within " +
      "`OTEL_DECODE_TIMEOUT_MS` (default 10 s). On SQLite the 200 answer comes once the export is decoded and written whole to the trace inbox " +
      "beside the database; its spans are stored from there in the background, usually within milliseconds (a stopped server stores them when it " +
      "starts again). While more than `OTEL_INBOX_MAX_BYTES` (default 256 MiB) wait there, or with it 0, an export is stored before it is answered. " +
      "Errors (400, 401, 413, 415, 422, 503) use the API's JSON error shape whatever the request's content type.",
    tag,
    requestContent: { "application/x-protobuf": protobufBody, "application/json": otlpJsonRequest },
    responses: {
      200: {
        description: "Accepted (possibly in part): an `ExportTraceServiceResponse`, protobuf-encoded for protobuf requests",
        content: { "application/json": exportResponse, "application/x-protobuf": protobufBody },
      },
      400: {
        description: "Unreadable body: not an OTLP export in the declared encoding, invalid gzip, JSON that is not UTF-8, or JSON nested deeper than `MAX_JSON_DEPTH` (default 128)",
        schema: errorSchema,
      },
      413: { description: "Body over `OTEL_MAX_BODY_BYTES` (default 16 MiB), as sent or after gunzip", schema: errorSchema },
      415: { description: "Content-Type other than `application/x-protobuf` or `application/json`, or a Content-Encoding other than gzip", schema: errorSchema },
      422: { description: "Decoding took longer than `OTEL_DECODE_TIMEOUT_MS` and was stopped; nothing was stored", schema: errorSchema },
      503: { description: "Stored before answering (the trace inbox full, or off) and SQLite's writer stayed busy past its time limit; nothing was stored: export again (OTLP exporters retry it)", schema: errorSchema },
    },
  },
  {
    method: "get",
    path: "/otel/evaluation-export",
    operationId: "getEvaluationExport",
    summary: "Verdicts sent back onto the traces by this process (OTEL_EVALUATION_ENDPOINT)",
    description:
      "With `OTEL_EVALUATION_ENDPOINT` set, every cell a run saves for a conversation that came over OTLP (every conversation with " +
      "`OTEL_EVALUATION_SCOPE=all`) is sent there as an OTLP/HTTP protobuf span `gen_ai.evaluation.result`, a child of the span that wrote what " +
      "was judged, with `gen_ai.evaluation.name`, `gen_ai.evaluation.score.value`, `gen_ai.evaluation.score.label` (`pass`/`fail`/`skipped`) " +
      "and `gen_ai.evaluation.explanation` (docs/otel.md). Counts since this process started: `queued` (waiting or in flight), `exported`, " +
      "`failed` (the collector refused them after its retries), `dropped` (more than `OTEL_EVALUATION_QUEUE` waiting), `skipped` (no trace to attach to).",
    tag,
    responses: {
      200: {
        description: "The exporter's counts",
        schema: z
          .object({
            enabled: z.boolean(),
            endpoint: z.string().nullable(),
            queued: z.number().int(),
            exported: z.number().int(),
            failed: z.number().int(),
            dropped: z.number().int(),
            skipped: z.number().int(),
          })
          .meta({ id: "EvaluationExport" }),
      },
    },
  },
];
