/** The one error class of the app (below every domain module; lib/api maps it to HTTP), and its wire shape (shared/API.md, "Errors"). */
export type ErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | "unprocessable"
  | "too_many_requests"
  | "internal"
  | "unavailable";

export type ErrorDetail = { path: string; message: string };

const statusByCode: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  too_many_requests: 429,
  internal: 500,
  unavailable: 503,
};

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    status?: number,
  ) {
    super(message);
    this.name = "AppError";
    this.status = status ?? statusByCode[code];
  }

  toResponse(headers?: HeadersInit): Response {
    return errorResponse(this.code, this.message, this.details, this.status, headers);
  }
}

/** `Dataset 42 does not exist` as a 404. */
export function notFound(resource: string, id: number | string): AppError {
  return new AppError("not_found", `${resource} ${id} does not exist`);
}

export function errorResponse(
  code: ErrorCode,
  message: string,
  details: ErrorDetail[] = [],
  status = statusByCode[code],
  headers?: HeadersInit,
): Response {
  return Response.json({ error: { code, message, details } }, { status, headers });
}
