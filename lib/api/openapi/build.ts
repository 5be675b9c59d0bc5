/**
 * Builds the OpenAPI 3.1 document from the operation list, converting the very zod schemas the route
 * handlers parse with (zod 4's JSON Schema output is draft 2020-12, which OpenAPI 3.1 uses).
 */
import { z } from "zod";
import { errorSchema, integerTextSchemas } from "@/lib/schemas/common";
import { alignmentOperations } from "./alignments";
import { comparisonOperations } from "./comparisons";
import { datasetOperations } from "./datasets";
import { executionOperations } from "./executions";
import { goalOperations } from "./goal";
import { generationOperations } from "./generations";
import { healthOperations } from "./health";
import { sessionOperations } from "./session";
import { settingsOperations } from "./settings";
import { userOperations } from "./users";
import { importOperations } from "./imports";
import { labelOperations } from "./labels";
import { mcpOperations } from "./mcp";
import { metricOperations } from "./metrics";
import { onlineOperations } from "./online";
import { otelOperations } from "./otel";
import { resultOperations } from "./results";
import type { Operation, ResponseSpec } from "./types";

/** Every documented endpoint. Later resources append their lists here. */
export const operations: Operation[] = [...datasetOperations, ...goalOperations, ...healthOperations, ...metricOperations, ...importOperations, ...executionOperations, ...settingsOperations, ...resultOperations, ...sessionOperations, ...labelOperations, ...userOperations, ...otelOperations, ...onlineOperations, ...generationOperations, ...comparisonOperations, ...alignmentOperations, ...mcpOperations];

type JsonSchema = Record<string, unknown>;

const componentRef = (id: string) => `#/components/schemas/${id}`;

/** Integer path/query params arrive as text; document them as the integers they are. */
const override: NonNullable<Parameters<typeof z.toJSONSchema>[1]>["override"] = (ctx) => {
  const bounds = integerTextSchemas.get(ctx.zodSchema as unknown as z.ZodType);
  if (!bounds) return;
  for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as JsonSchema)[key];
  Object.assign(ctx.jsonSchema, { type: "integer", ...bounds });
};

function schemaId(schema: z.ZodType): string | undefined {
  const meta = z.globalRegistry.get(schema);
  return typeof meta?.id === "string" ? meta.id : undefined;
}

function inline(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const out = convert(schema, io);
  // Inputs are inlined; a registered (id) schema inside one would leave a dangling local $ref.
  if (out.$defs) throw new Error(`inline schema has $defs (${Object.keys(out.$defs).join(", ")}): register it only for output`);
  return out;
}

function convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const out = z.toJSONSchema(schema, {
    io,
    target: "draft-2020-12",
    unrepresentable: "any",
    override,
  }) as JsonSchema;
  delete out.$schema;
  delete out.id;
  return out;
}

function bodySchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const id = schemaId(schema);
  if (io === "input") return inline(schema, io);
  if (id) return { $ref: componentRef(id) };
  // An unnamed response (a union of named ones): its named parts are components (componentSchemas).
  const { $defs: _defs, ...rest } = convert(schema, io);
  return toComponentRefs(rest) as JsonSchema;
}

function parameters(op: Operation): JsonSchema[] {
  const out: JsonSchema[] = [];
  const add = (where: "path" | "query" | "header", obj: z.ZodObject | undefined) => {
    if (!obj) return;
    const json = inline(obj, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, schema] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = schema;
      out.push({
        name,
        in: where,
        required: where === "path" || (json.required ?? []).includes(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  };
  add("path", op.params);
  add("query", op.query);
  add("header", op.headers);
  return out;
}

function response(spec: ResponseSpec): JsonSchema {
  const out: JsonSchema = { description: spec.description };
  if (spec.headers) out.headers = spec.headers;
  if (spec.schema) {
    const schema = bodySchema(spec.schema, "output");
    out.content = { "application/json": { schema: spec.array ? { type: "array", items: schema } : schema } };
  } else if (spec.content) {
    out.content = Object.fromEntries(Object.entries(spec.content).map(([type, schema]) => [type, { schema }]));
  } else if (spec.contentType) {
    out.content = { [spec.contentType]: { schema: { type: "string" } } };
  }
  return out;
}

/** Points every `#/$defs/X` reference of a converted schema at `#/components/schemas/X`. */
function toComponentRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toComponentRefs);
  if (!value || typeof value !== "object") return value;
  const out: JsonSchema = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = key === "$ref" && typeof item === "string" && item.startsWith("#/$defs/") ? componentRef(item.slice("#/$defs/".length)) : toComponentRefs(item);
  }
  return out;
}

/**
 * The named (`.meta({ id })`) schemas the documented responses reach. They are found from this module's
 * own operation list, not by listing zod's global registry: the server bundles lib/schemas into more than
 * one chunk, each registering its own copy of "Dataset" and the rest in the one process-wide registry, and
 * converting that registry whole failed with "Duplicate schema id" once a second copy had loaded (the API
 * reference page answered 500 depending on which page the process had served before it).
 */
function componentSchemas(): Record<string, JsonSchema> {
  const outputs = new Set<z.ZodType>([errorSchema]);
  for (const op of operations) for (const spec of Object.values(op.responses)) if (spec.schema) outputs.add(spec.schema);
  const all = z.toJSONSchema(z.object(Object.fromEntries([...outputs].map((schema, i) => [`r${i}`, schema]))), {
    io: "output",
    target: "draft-2020-12",
    unrepresentable: "any",
    override,
  }) as { $defs?: Record<string, JsonSchema> };
  const schemas: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(all.$defs ?? {})) {
    const { $schema: _schema, id: _id, ...rest } = toComponentRefs(schema) as JsonSchema;
    schemas[id] = rest;
  }
  return schemas;
}

/** The whole OpenAPI 3.1 document. */
export function buildOpenApiDocument(opts: { version: string; serverUrl?: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const op of operations) {
    const item: JsonSchema = {
      operationId: op.operationId,
      summary: op.summary,
      tags: [op.tag],
      responses: Object.fromEntries(
        Object.entries(op.responses).map(([status, spec]) => [status, response(spec)]),
      ),
    };
    if (op.description) item.description = op.description;
    if (op.public) item.security = [];
    const params = parameters(op);
    if (params.length) item.parameters = params;
    if (op.requestContent) {
      item.requestBody = { required: true, content: Object.fromEntries(Object.entries(op.requestContent).map(([type, schema]) => [type, { schema }])) };
    } else if (op.body) {
      item.requestBody = {
        required: true,
        content: { [op.bodyContentType ?? "application/json"]: { schema: bodySchema(op.body, "input") } },
      };
      // Every JSON body is capped (lib/api/route.ts), whatever else the operation answers.
      if ((op.bodyContentType ?? "application/json") === "application/json" && !(413 in op.responses)) {
        (item.responses as Record<string, JsonSchema>)["413"] = response({ description: "Body over `MAX_JSON_BODY_BYTES` (default 1 MiB): nothing changes", schema: errorSchema });
      }
    }
    (paths[op.path] ??= {})[op.method] = item;
  }
  const tags = [...new Set(operations.map((o) => o.tag))].map((name) => ({ name }));
  return {
    openapi: "3.1.0",
    info: {
      title: "Turnscope API",
      version: opts.version,
      description:
        "Evaluate conversations with AI assistants and agents. Errors share one shape " +
        "`{error: {code, message, details}}`. With no credential configured (no `API_TOKEN`, no API key) the server is in its " +
        "one-person mode: every caller is an admin and names themselves with `X-User-Id` (default `default`). Once `API_TOKEN` " +
        "is set or any API key exists (`POST /users/{id}/keys`), every request needs `Authorization: Bearer <key>` (or the " +
        "token, whose user is `admin`) or the session cookie that `POST /session` hands a browser (HttpOnly, SameSite=Strict, " +
        "server-side, ended by sign-out, expires after `SESSION_TTL_HOURS`; refused when a browser marks the request cross-site); " +
        "the user id is the credential's and `X-User-Id` is ignored. 401: no valid credential. 403 `forbidden`: the role may not " +
        "do this (viewers read; annotators also write: label, import, create metrics, run; admins also manage people and keys). " +
        "429 with `Retry-After`: ten wrong credentials from one client address within five minutes (the socket's address, or " +
        "`X-Forwarded-For` only from `TRUSTED_PROXIES`), counted on pages and malformed paths too. While the server is open, " +
        "people and keys are managed from a loopback address only (403 otherwise). An event stream ends when its credential is " +
        "revoked. Limits on what a caller sends (413/422 naming the limit): docs/configuration.md, \"Limits on what a caller sends\".",
    },
    servers: [{ url: opts.serverUrl ?? "/api" }],
    tags,
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key (or API_TOKEN); needed once any credential is configured" } },
    },
    security: [{}, { bearer: [] }],
  };
}
