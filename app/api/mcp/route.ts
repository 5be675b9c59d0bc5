/**
 * The MCP server over Streamable HTTP, stateless: each POST is answered by a new server for its caller
 * (lib/mcp), in JSON. The caller is authenticated as every REST request is (the bearer API key, else the
 * session cookie): 401 without one when credentials are configured; each tool then refuses a role the REST
 * endpoint it stands for refuses. With no session there is no stream to open: GET is 405
 * (and DELETE, which ends a session, is not served).
 */
import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { authenticate, toErrorResponse } from "@/lib/api/route";
import { refuseNul } from "@/lib/api/nul";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { createMcpServer } from "@/lib/mcp";

export const dynamic = "force-dynamic";

async function handle(req: Request): Promise<Response> {
  const requestId = req.headers.get("x-request-id") || randomUUID();
  const started = performance.now();
  let response: Response;
  try {
    const caller = await authenticate(req);
    if (req.method !== "POST") {
      response = Response.json(
        { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this MCP server is stateless, POST each message" }, id: null },
        { status: 405, headers: { allow: "POST" } },
      );
    } else {
      const server = createMcpServer(caller, { checkArguments: (args) => refuseNul(args, "arguments") });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
        maxRequestBodySize: getConfig().MAX_JSON_BODY_BYTES,
      });
      await server.connect(transport);
      // A client that goes away ends its call: closing the server aborts the tool in flight (a get_run waiting for the end).
      req.signal.addEventListener("abort", () => void server.close(), { once: true });
      try {
        response = await transport.handleRequest(req);
      } finally {
        // JSON mode: the answer is whole by now, so the per-request server can go.
        await server.close();
      }
    }
  } catch (error) {
    response = toErrorResponse(error, requestId);
  }
  try {
    response.headers.set("x-request-id", requestId);
  } catch {
    // A response with immutable headers; the id is in the log either way.
  }
  log.info("request", { request_id: requestId, method: req.method, path: "/api/mcp", status: response.status, ms: Math.round(performance.now() - started) });
  return response;
}

export const POST = handle;
export const GET = handle;
