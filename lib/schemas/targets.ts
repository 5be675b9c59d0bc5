/** Wire schemas of targets: an agent or model a generation sends conversations to (API.md, fourth phase). */
import { z } from "zod";
import { targetKinds } from "@/lib/vocabulary";
import { isoTimestamp } from "./common";

export { targetKinds, type TargetKind } from "@/lib/vocabulary";

const headerValue = z.string().max(4000);
const base = {
  name: z.string().trim().min(1).max(200),
  kind: z.enum(targetKinds).describe("`openai_chat`: a Chat Completions endpoint (url = its base URL, …/v1); `http_json`: your agent service (request_template, reply_path); `ai_sdk_ui`: an AI SDK chat route (useChat's request, the UI message stream read back)"),
  url: z.url({ message: "must be an http(s) URL" }).refine((u) => /^https?:\/\//.test(u), "must be an http(s) URL"),
  model: z.string().trim().min(1).max(200).nullable().optional().describe("openai_chat: the model name"),
  headers: z.record(z.string().min(1).max(200), headerValue).optional().describe("Sent with each request; a value `${env:NAME}` is read from the server's environment, for names in TARGET_SECRET_ENV only. Never echoed back"),
  request_template: z.string().max(64 * 1024).nullable().optional().describe("http_json: the JSON body, with `{{messages}}`, `{{last_user_message}}`, `{{session_id}}` placeholders"),
  reply_path: z.string().max(500).nullable().optional().describe("http_json: where the reply text is in the answer, e.g. `reply` or `choices[0].message.content`"),
  steps_path: z.string().max(500).nullable().optional().describe("http_json: where a list of tool calls is ({name, arguments, result} each)"),
  max_concurrency: z.number().int().min(1).max(256).optional().describe("Conversations sent to it at once (default 16)"),
  timeout_ms: z.number().int().min(100).max(600_000).optional().describe("Time limit of one request (default 60000)"),
};

export const createTargetBody = z.object(base).superRefine((t, ctx) => {
  if (t.kind === "openai_chat" && !t.model) ctx.addIssue({ code: "custom", path: ["model"], message: "is required for an openai_chat target" });
  if (t.kind === "http_json" && !t.request_template) ctx.addIssue({ code: "custom", path: ["request_template"], message: "is required for an http_json target" });
  if (t.kind === "http_json" && !t.reply_path) ctx.addIssue({ code: "custom", path: ["reply_path"], message: "is required for an http_json target" });
  if (t.request_template) {
    try {
      JSON.parse(t.request_template.replace(/\{\{\s*(messages|last_user_message|session_id)\s*\}\}/g, "null"));
    } catch {
      ctx.addIssue({ code: "custom", path: ["request_template"], message: "must be JSON (placeholders may stand as values or inside strings)" });
    }
  }
});
export const updateTargetBody = z.object(base).partial();

export const targetSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    kind: z.enum(targetKinds),
    url: z.string(),
    model: z.string().nullable(),
    header_names: z.array(z.string()).describe("The headers sent (their values are never shown)"),
    request_template: z.string().nullable(),
    reply_path: z.string().nullable(),
    steps_path: z.string().nullable(),
    max_concurrency: z.number().int(),
    timeout_ms: z.number().int(),
    user_id: z.string(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: "Target" });

export type CreateTargetInput = z.infer<typeof createTargetBody>;
export type Target = z.infer<typeof targetSchema>;
