/** What an MCP tool is here: a name, a zod input schema, the weakest role allowed and a thin call of a service. */
import { z } from "zod";
import type { Caller, Role } from "@/lib/auth";
import { AppError, type ErrorDetail } from "@/lib/errors";

export type ToolContext = {
  caller: Caller;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
  /**
   * Tell the client how far the call has got (MCP `notifications/progress`): present only when the client
   * asked for progress (a `progressToken` in the call's `_meta`); the answer then comes as a stream.
   */
  progress?: (progress: number, total?: number, message?: string) => Promise<void>;
};

export type McpTool = {
  name: string;
  title: string;
  description: string;
  /** The arguments' schema: listed to clients as JSON Schema (its input side) and parsed on every call. */
  input: z.ZodObject;
  /** The weakest role allowed: that of the REST endpoint the tool stands for (reads `viewer`, writes `annotator`). */
  role: Role;
  /** MCP tool annotations: whether the tool only reads, and whether it reaches beyond Turnscope (a target). */
  readOnly: boolean;
  openWorld?: boolean;
  /** Runs with the parsed arguments; AppErrors are the answer's error, as the REST API gives them. */
  call: (args: unknown, ctx: ToolContext) => Promise<unknown>;
};

/** A tool whose `run` receives its arguments parsed by `input` (a 400 `bad_request` naming the field otherwise). */
export function defineTool<S extends z.ZodObject>(def: Omit<McpTool, "call" | "input"> & { input: S; run: (args: z.output<S>, ctx: ToolContext) => Promise<unknown> }): McpTool {
  const { run, ...rest } = def;
  return { ...rest, call: (args, ctx) => run(parseArgs(def.input as unknown as z.ZodType<z.output<S>, unknown>, args ?? {}, "arguments"), ctx) };
}

/** `{path, message}` per zod issue, paths written like `items[0].name` (as the REST API writes them). */
function issueDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("") || "(root)",
    message: issue.message,
  }));
}

/** Parse with a schema, or throw the REST API's 400 for it (`Invalid <where> (<path>: <message>)` with every issue in details). */
export function parseArgs<T>(schema: z.ZodType<T, unknown>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = issueDetails(parsed.error);
  const first = details[0];
  throw new AppError("bad_request", `Invalid ${where} (${first ? `${first.path}: ${first.message}` : "invalid"})`, details);
}

/** The page size arguments every listing tool takes. */
export function pageArgs(defaultLimit: number, maxLimit: number) {
  return {
    limit: z.number().int().min(1).max(maxLimit).default(defaultLimit).describe(`Items per page (default ${defaultLimit}, at most ${maxLimit})`),
    offset: z.number().int().min(0).default(0).describe("Items to skip: the previous page's next_offset"),
  };
}

/** Characters each long text keeps (reasoning, message content, tool arguments). */
export const maxCharsArg = z
  .number()
  .int()
  .min(50)
  .max(20_000)
  .default(600)
  .describe("Characters each long text keeps before it is clipped (default 600); the clipped text says how many were left out");
