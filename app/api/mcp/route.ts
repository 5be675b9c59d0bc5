/**
 * The MCP server over Streamable HTTP, stateless: each POST is answered by a new server for its caller
 * (lib/mcp), in JSON — or, when a call asks for progress (a `progressToken` in its `_meta`), as an event
 * stream carrying `notifications/progress` before the answer (get_run, get_generation waiting). The caller is authenticated as every REST request is (the bearer API key, else the
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
      const streaming = await asksForProgress(req);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: !streaming,
        maxRequestBodySize: getConfig().MAX_JSON_BODY_BYTES,
      });
      await server.connect(transport);
      // A client that goes away ends its call: closing the server aborts the tool in flight (a get_run waiting for the end).
      req.signal.addEventListener("abort", () => void server.close(), { once: true });
      let closeLater = false;
      try {
        response = await transport.handleRequest(req);
        if (streaming && response.body && response.headers.get("content-type")?.startsWith("text/event-stream")) {
          // The stream ends after the answer: the per-request server goes then.
          response = new Response(response.body.pipeThrough(new TransformStream({ flush: () => void server.close() })), response);
          closeLater = true;
        }
      } finally {
        // JSON mode: the answer is whole by now, so the per-request server can go.
        if (!closeLater) await server.close();
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

/** Whether a message of the POST asks for progress (`params._meta.progressToken`); a body that is not JSON is the transport's to refuse. */
async function asksForProgress(req: Request): Promise<boolean> {
  if (!req.headers.get("accept")?.includes("text/event-stream")) return false;
  // Read twice only when the body's size is known and within the limit (the transport refuses the rest).
  const length = Number(req.headers.get("content-length") ?? NaN);
  if (!Number.isFinite(length) || length > getConfig().MAX_JSON_BODY_BYTES) return false;
  try {
    const body = (await req.clone().json()) as unknown;
    const messages = Array.isArray(body) ? body : [body];
    return messages.some((m) => {
      const meta = (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
      return meta?.progressToken !== undefined;
    });
  } catch {
    return false;
  }
}

export const POST = handle;
export const GET = handle;
