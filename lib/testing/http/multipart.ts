/** Test helper: call an import route handler with a multipart form, the way a browser would send it. */
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

export type UploadOptions = {
  file?: string | Uint8Array;
  filename?: string;
  /** Further `file` parts after `file`, for an import of several files joined on `join_key`. */
  moreFiles?: Array<{ file: string | Uint8Array; filename: string }>;
  fields?: Record<string, string>;
  params?: Record<string, string | number>;
  headers?: Record<string, string>;
};

/** POST a form with `file` (omitted when undefined) and text fields; returns status and parsed JSON. */
export async function upload(handler: Handler, url: string, opts: UploadOptions = {}) {
  const form = new FormData();
  if (opts.file !== undefined) {
    const part = typeof opts.file === "string" ? opts.file : new Uint8Array(opts.file);
    form.append("file", new Blob([part], { type: "application/json" }), opts.filename ?? "upload.json");
  }
  for (const more of opts.moreFiles ?? []) {
    const part = typeof more.file === "string" ? more.file : new Uint8Array(more.file);
    form.append("file", new Blob([part], { type: "application/json" }), more.filename);
  }
  for (const [k, v] of Object.entries(opts.fields ?? {})) form.append(k, v);
  const req = new Request(new URL(url, "http://localhost"), { method: "POST", body: form, headers: opts.headers });
  const params = Object.fromEntries(Object.entries(opts.params ?? {}).map(([k, v]) => [k, String(v)]));
  const res = await handler(req, { params: Promise.resolve(params) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: json as any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience: assertions index into arbitrary JSON
}
