/**
 * A real HTTP server in front of route handlers, for clients that must speak HTTP themselves (the
 * OpenTelemetry exporters). Each request is handed to the handler as the Request Next.js would give it;
 * every request body is recorded so a test can send the same exports again (unless `record: false`:
 * a benchmark sending a million spans must not keep them all).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

export type RecordedRequest = { path: string; headers: Record<string, string>; body: Buffer; status: number };

export type RouteServer = { baseURL: string; requests: RecordedRequest[]; close(): Promise<void> };

/** Serve `routes` (path → handler) on 127.0.0.1 at a free port. */
export async function serveRoutes(routes: Record<string, Handler>, options: { record?: boolean } = {}): Promise<RouteServer> {
  const record = options.record ?? true;
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const url = new URL(req.url ?? "/", "http://127.0.0.1");
        const handler = routes[url.pathname];
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
        if (!handler) {
          res.writeHead(404).end();
          return;
        }
        const request = new Request(url, { method: req.method, headers, body: req.method === "GET" || req.method === "HEAD" ? undefined : body });
        const response = await handler(request, { params: Promise.resolve({}) });
        if (record) requests.push({ path: url.pathname, headers, body, status: response.status });
        const out = Buffer.from(await response.arrayBuffer());
        res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
        res.end(out);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
