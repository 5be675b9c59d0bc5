/** Browser-side calls to the public API, turning the error shape into a thrown ApiError. */
export type ApiErrorDetail = { path: string; message: string };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ApiErrorDetail[] = [],
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * fetch `/api{path}` as JSON; returns the body and the total count header when present, with whether that
 * total is an estimate (`X-Total-Count-Kind: estimated`, the grid's large filtered pages).
 */
export async function apiFetch<T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<{ data: T; total: number | null; estimated: boolean }> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  const res = await fetch(`/api${path}`, { ...init, headers, body });
  const total = res.headers.get("x-total-count");
  const text = await res.text();
  const parsed: unknown = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const err = (parsed as { error?: { code?: string; message?: string; details?: ApiErrorDetail[] } })?.error;
    throw new ApiError(res.status, err?.code ?? "error", err?.message ?? `Request failed (${res.status})`, err?.details ?? []);
  }
  return { data: parsed as T, total: total === null ? null : Number(total), estimated: res.headers.get("x-total-count-kind") === "estimated" };
}
