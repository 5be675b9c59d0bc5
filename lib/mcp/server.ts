/**
 * Turnscope's MCP server for one caller: the tools (lib/mcp/*-tools.ts) and the transcript resource, each
 * refused as the REST endpoint it stands for refuses that caller's role. A tool's failure is the REST API's
 * error — `{error: {code, message, details}}` — as the tool's result with `isError`; a resource's is a
 * JSON-RPC error carrying the same object in `data`.
 *
 * The low-level `Server` (not `McpServer`) because arguments are parsed here with the REST API's zod
 * schemas, so a bad argument is the API's 400 naming the field rather than the SDK's own message.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { requireRole, type Caller } from "@/lib/auth";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { version } from "@/lib/version";
import type { McpTool } from "./define";
import { getConversationTool, listDatasetsTool, listMetricsTool, listTemplatesTool, searchConversationsTool } from "./find-tools";
import { getGenerationTool, startGenerationTool } from "./generation-tools";
import { readTranscript, TRANSCRIPT_TEMPLATE } from "./resources";
import { compareRunsTool, estimateRunTool, gateTool, getResultsTool, getRunTool, startRunTool } from "./run-tools";

export const tools: McpTool[] = [
  listDatasetsTool,
  searchConversationsTool,
  getConversationTool,
  listMetricsTool,
  listTemplatesTool,
  estimateRunTool,
  startRunTool,
  getRunTool,
  getResultsTool,
  compareRunsTool,
  startGenerationTool,
  getGenerationTool,
  gateTool,
];

const instructions =
  "Turnscope judges conversations with AI assistants and agents. Find a dataset (list_datasets), its conversations (search_conversations) and metrics " +
  "(list_metrics); price a run with estimate_run, start it with start_run (max_cost_usd caps its cost), follow it with get_run and wait_seconds until its " +
  "status is completed, failed or cancelled, then read aggregates (get_run), results (get_results), compare_runs and the gate. Lists are paged: pass " +
  "next_offset as offset. Errors are the REST API's: {error: {code, message, details}}.";

/** The JSON Schema a tool lists: its arguments' input side (defaults make a field optional). */
function inputJsonSchema(tool: McpTool): { type: "object"; [key: string]: unknown } {
  const { $schema: _dropped, ...schema } = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  void _dropped;
  return { ...schema, type: "object" };
}

export type ApiError = { error: { code: string; message: string; details: Array<{ path: string; message: string }> } };

/** The API's error object for anything thrown; what is not an AppError is logged and answered as `internal`, as the REST API does. */
function apiError(error: unknown, where: string): ApiError {
  if (error instanceof AppError) return { error: { code: error.code, message: error.message, details: error.details } };
  log.error("unhandled error", { where, error });
  return { error: { code: "internal", message: "Internal server error", details: [] } };
}

function toolResult(value: unknown): CallToolResult {
  const structured = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: structured };
}

function toolError(error: ApiError): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(error) }], structuredContent: error, isError: true };
}

const rpcCodeOf: Record<string, number> = { not_found: -32002, bad_request: ErrorCode.InvalidParams };

export type McpServerOptions = {
  /** Checks every tool's arguments before its schema (the web layer's NUL check), throwing an AppError. */
  checkArguments?: (args: unknown) => void;
};

/** A new MCP server answering as `caller` (one per request: the HTTP transport is stateless). */
export function createMcpServer(caller: Caller, options: McpServerOptions = {}): Server {
  const server = new Server({ name: "turnscope", title: "Turnscope", version }, { capabilities: { tools: {}, resources: {} }, instructions });
  const byName = new Map(tools.map((t) => [t.name, t]));

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: inputJsonSchema(t),
      annotations: { title: t.title, readOnlyHint: t.readOnly, destructiveHint: false, openWorldHint: t.openWorld ?? false },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name.slice(0, 100)}; tools/list names them`);
    try {
      requireRole(caller, tool.role);
      options.checkArguments?.(request.params.arguments ?? {});
      const token = request.params._meta?.progressToken;
      const progress =
        token === undefined
          ? undefined
          : (done: number, total?: number, message?: string) =>
              extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: done, total, message } }).catch(() => undefined);
      return toolResult(await tool.call(request.params.arguments ?? {}, { caller, signal: extra.signal, progress }));
    } catch (error) {
      return toolError(apiError(error, `mcp tool ${tool.name}`));
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: TRANSCRIPT_TEMPLATE,
        name: "conversation-transcript",
        title: "Conversation transcript",
        description: "A conversation as text: every message as [role]: content, with its steps (thinking, tool calls and results) summarised — what the judge's @HISTORY reads",
        mimeType: "text/plain",
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    try {
      requireRole(caller, "viewer");
      const { text } = await readTranscript(request.params.uri);
      return { contents: [{ uri: request.params.uri, mimeType: "text/plain", text }] };
    } catch (error) {
      const e = apiError(error, "mcp resource");
      throw new McpError(rpcCodeOf[e.error.code] ?? ErrorCode.InternalError, e.error.message, e);
    }
  });
  return server;
}
