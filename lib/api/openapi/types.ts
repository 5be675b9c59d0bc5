import type { z } from "zod";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

export type ResponseSpec = {
  description: string;
  /** JSON body; `array: true` wraps it as a list. */
  schema?: z.ZodType;
  array?: boolean;
  /** A non-JSON body (CSV, SSE, a workbook) described in words and by media type. */
  contentType?: string;
  /** Several bodies to choose from (an export's formats): media type → JSON Schema of that body. */
  content?: Record<string, Record<string, unknown>>;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
};

/** One endpoint as OpenAPI shows it, built from the zod schemas its route handler parses with. */
export type Operation = {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Request headers the operation reads (documented as `in: header` parameters). */
  headers?: z.ZodObject;
  body?: z.ZodType;
  bodyContentType?: "application/json" | "multipart/form-data";
  /** A body not parsed by a zod schema (OTLP protobuf or JSON): media type → JSON Schema, described in words. */
  requestContent?: Record<string, Record<string, unknown>>;
  responses: Record<number, ResponseSpec>;
  /** Reachable without the token (`security: []`): only the sign-in endpoint. */
  public?: boolean;
};
