/** lib/mcp: the MCP server's tools and resource, each a thin call of the services the REST routes use. */
export { createMcpServer, tools, type ApiError, type McpServerOptions } from "./server";
export { MAX_WAIT_SECONDS } from "./wait";
