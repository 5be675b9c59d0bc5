import { errorSchema } from "@/lib/schemas/common";
import { MAX_WAIT_SECONDS, tools } from "@/lib/mcp";
import type { Operation } from "./types";

const tag = "MCP";

const jsonRpc = {
  type: "object",
  description: "A JSON-RPC 2.0 message of the Model Context Protocol (`initialize`, `tools/list`, `tools/call`, `resources/read`, …), or an array of them",
  properties: { jsonrpc: { type: "string", enum: ["2.0"] }, id: { type: ["integer", "string"] }, method: { type: "string" }, params: { type: "object" } },
};

/** The tools as the server lists them, one line each, so this page cannot drift from lib/mcp. */
const toolLines = tools.map((t) => `- \`${t.name}\` (${t.role}): ${t.title}`).join("\n");

export const mcpOperations: Operation[] = [
  {
    method: "post",
    path: "/mcp",
    operationId: "mcp",
    summary: "The MCP server (Streamable HTTP, stateless): tools for coding agents",
    description:
      "The Model Context Protocol over Streamable HTTP, served by the official SDK: POST each JSON-RPC message with " +
      "`Accept: application/json, text/event-stream`; requests are answered in JSON (200), notifications with 202; a request whose " +
      "`params._meta.progressToken` asks for progress is answered as an event stream (200, text/event-stream): " +
      "`notifications/progress` while it works, then its response. Stateless: no " +
      "`Mcp-Session-Id`, every POST stands alone. Authenticated as every route is (`Authorization: Bearer <key>`): 401 without a credential " +
      "once the service is locked. Each tool is allowed to the roles of the REST endpoint it stands for; a refused call is a tool result with " +
      "`isError: true` whose text is the API's error (`{\"error\": {\"code\": \"forbidden\", …}}`), as are bad arguments (`bad_request`, " +
      "`details` naming the field) and unknown ids (`not_found`). Lists are paged (`offset`, `next_offset`), long texts clipped. `get_run` " +
      `and \`get_generation\` wait up to ${MAX_WAIT_SECONDS} s (\`wait_seconds\`) for the end. Resource template: ` +
      "`turnscope://conversations/{id}/transcript` (text/plain). Connecting a client: docs/mcp.md.\n\nTools:\n" +
      toolLines,
    tag,
    requestContent: { "application/json": jsonRpc },
    responses: {
      200: {
        description: "The JSON-RPC response(s); as an event stream when the request asked for progress",
        content: { "application/json": { type: "object" }, "text/event-stream": { type: "string" } },
      },
      202: { description: "Notifications and responses only: accepted, no body" },
      400: { description: "Not a JSON-RPC message (a JSON-RPC error body)", content: { "application/json": { type: "object" } } },
      406: { description: "`Accept` does not name both application/json and text/event-stream (a JSON-RPC error body)", content: { "application/json": { type: "object" } } },
      413: { description: "Body over `MAX_JSON_BODY_BYTES` (a JSON-RPC error body)", content: { "application/json": { type: "object" } } },
      415: { description: "Content-Type other than application/json (a JSON-RPC error body)", content: { "application/json": { type: "object" } } },
    },
  },
  {
    method: "get",
    path: "/mcp",
    operationId: "mcpStream",
    summary: "No stream to open: 405 (the MCP server is stateless)",
    description: "Streamable HTTP's optional server-to-client stream is not offered: a stateless server has nothing to send outside a POST's answer. 401 without a credential, as everywhere.",
    tag,
    responses: {
      405: { description: "Method not allowed (`Allow: POST`), a JSON-RPC error body", content: { "application/json": { type: "object" } } },
      401: { description: "No valid credential", schema: errorSchema },
    },
  },
];
