/** Helpers to call route handlers in-process the way Next.js does: a Request and a params promise. */
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

export type CallOptions = { body?: unknown; rawBody?: string; headers?: Record<string, string>; params?: Record<string, string | number> };

/** Call a route handler with a JSON body and path params; returns status, headers and parsed JSON. */
export async function call(handler: Handler, method: string, url: string, opts: CallOptions = {}) {
  const headers = new Headers(opts.headers);
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const req = new Request(new URL(url, "http://localhost"), { method, headers, body });
  const params = Object.fromEntries(Object.entries(opts.params ?? {}).map(([k, v]) => [k, String(v)]));
  const res = await handler(req, { params: Promise.resolve(params) });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: json as any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience: assertions index into arbitrary JSON
}
