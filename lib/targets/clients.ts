/**
 * One client per target kind (issue 37). Each takes the conversation so far and answers the target's
 * reply: its text, the tool calls it made (as steps) and, when the target says so, the tokens. A target
 * that errs, times out or answers nothing throws TargetError — the generation records `target_error`,
 * never a pass. Header values `${env:NAME}` are read from the server's environment here and nowhere else,
 * only names on the admin's TARGET_SECRET_ENV list; every request goes through ./http (deadline, byte budget,
 * address policy, no redirect across origins).
 */
import { readPath } from "@/lib/checks/scope";
import type { Step } from "@/lib/conversation";
import type { TargetRow } from "@/db/repositories/targets";
import { targetKinds, type TargetKind } from "@/lib/schemas/targets";
import { chatCall, chatModel } from "./chat";
import { targetFetch, targetPost, TargetHttpError } from "./http";
import { allowedSecretEnv, ENV_REFERENCE, scrubSecrets } from "./policy";
import { isRecord } from "@/lib/vocabulary";

export class TargetError extends Error {}

export type Turn = { role: "system" | "user" | "assistant"; content: string };
export type TargetReply = { text: string; steps: Step[]; inputTokens: number; outputTokens: number; model: string | null };
export type DeclaredTool = { name: string; description?: string; parameters: Record<string, unknown> };
export type TargetRequest = { turns: Turn[]; sessionId: string; tools: DeclaredTool[]; signal: AbortSignal; seed?: number };


/**
 * The headers to send, `${env:NAME}` read from the environment — only names an admin listed in
 * TARGET_SECRET_ENV (checked when the target is saved, and again here: the list may have shrunk since).
 */
export function resolvedHeaders(headers: Record<string, string> | null): Record<string, string> {
  const out: Record<string, string> = {};
  const allowed = allowedSecretEnv();
  for (const [name, value] of Object.entries(headers ?? {})) {
    out[name] = value.replace(ENV_REFERENCE, (_, env: string) => {
      if (!allowed.has(env)) throw new TargetError(`header ${name} names \${env:${env}}, which is not in TARGET_SECRET_ENV (the environment variables an admin lets targets read)`);
      const found = process.env[env];
      if (found === undefined) throw new TargetError(`header ${name} names \${env:${env}}, which is not set on the server`);
      return found;
    });
  }
  return out;
}

const emptyStep = (): Step => ({ thinking: null, toolCall: null, toolResult: null, outputContent: null, outputStructured: null, modelName: null, agentName: null });

/** The error a generation records: the limit named, the URL's credentials and header secrets never in it. */
function failure(target: TargetRow, error: unknown, signal: AbortSignal, secrets: string[] = []): TargetError {
  if (signal.aborted) throw signal.reason;
  const name = (error as Error)?.name;
  const message = error instanceof TargetHttpError ? error.message : name === "TimeoutError" || name === "AbortError" ? `no answer within ${target.timeoutMs} ms (the target's timeout_ms)` : ((error as Error)?.message ?? String(error));
  return new TargetError(scrubSecrets(`target ${target.name}: ${message.slice(0, 500)}`, target.url, secrets));
}

function checkReply(target: TargetRow, reply: TargetReply): TargetReply {
  if (!reply.text.trim() && reply.steps.length === 0) throw new TargetError(`target ${target.name} answered nothing (an empty reply)`);
  return reply;
}

async function openAIChat(target: TargetRow, req: TargetRequest): Promise<TargetReply> {
  let headers: Record<string, string>;
  try {
    headers = resolvedHeaders(target.headers);
  } catch (error) {
    throw error instanceof TargetError ? error : failure(target, error, req.signal);
  }
  const secrets = Object.values(headers);
  // The key goes where the provider puts it (Authorization: Bearer); never the judge's OPENAI_API_KEY.
  const auth = Object.keys(headers).find((h) => h.toLowerCase() === "authorization");
  const apiKey = auth ? headers[auth].replace(/^Bearer\s+/i, "") : "none";
  if (auth) delete headers[auth];
  // The conversation's system prompt goes as the system message it is; the rest as the turns.
  try {
    const res = await chatCall(chatModel(target.url, apiKey, target.model ?? "model", headers, "target", targetFetch()), { turns: req.turns, tools: req.tools, seed: req.seed, signal: req.signal, timeoutMs: target.timeoutMs });
    const steps = res.toolCalls.map((c) => ({ ...emptyStep(), toolCall: { id: c.id, name: c.name, arguments: c.input }, modelName: target.model }));
    return checkReply(target, { text: res.text, steps, inputTokens: res.inputTokens, outputTokens: res.outputTokens, model: target.model });
  } catch (error) {
    if (error instanceof TargetError) throw error;
    throw failure(target, unwrapped(error), req.signal, secrets);
  }
}

/** The AI SDK wraps a failed fetch in an APICallError: the guard's own error, when it is the cause, says more. */
function unwrapped(error: unknown): unknown {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) if (e instanceof TargetHttpError) return e;
  return error;
}

/** One POST through the guarded client; an error becomes the TargetError a generation records. */
async function post(target: TargetRow, req: TargetRequest, body: string): Promise<{ status: number; ok: boolean; text: string }> {
  let headers: Record<string, string> = {};
  try {
    headers = resolvedHeaders(target.headers);
    const res = await targetPost(target.url, { headers: { "content-type": "application/json", ...headers }, body, signal: req.signal, timeoutMs: target.timeoutMs });
    if (!res.ok) throw new TargetError(scrubSecrets(`target ${target.name} answered ${res.status}: ${res.text.slice(0, 300)}`, target.url, Object.values(headers)));
    return res;
  } catch (error) {
    if (error instanceof TargetError) throw error;
    throw failure(target, error, req.signal, Object.values(headers));
  }
}

/** A value at a path such as `reply`, `data.text` or `choices[0].message.content` (a leading `$.` is allowed); own keys only. */
export function valueAt(value: unknown, path: string): unknown {
  return readPath(value, path.replace(/^\$\.?/, "").match(/[^.[\]]+/g) ?? []).value;
}

/** The request body from the template: `{{messages}}` as a value is the message list; placeholders inside strings are text. */
export function fillTemplate(template: string, req: Pick<TargetRequest, "turns" | "sessionId">): unknown {
  const lastUser = [...req.turns].reverse().find((t) => t.role === "user")?.content ?? "";
  const values: Record<string, unknown> = { messages: req.turns.map((t) => ({ role: t.role, content: t.content })), last_user_message: lastUser, session_id: req.sessionId };
  const whole = /^\{\{\s*(messages|last_user_message|session_id)\s*\}\}$/;
  const fill = (v: unknown): unknown => {
    if (typeof v === "string") {
      const m = whole.exec(v.trim());
      if (m) return values[m[1]];
      return v.replace(/\{\{\s*(messages|last_user_message|session_id)\s*\}\}/g, (_, k: string) => (typeof values[k] === "string" ? (values[k] as string) : JSON.stringify(values[k])));
    }
    if (Array.isArray(v)) return v.map(fill);
    if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };
  // A bare placeholder (not in quotes) is first made a string, then filled as a value.
  const quoted = template.replace(/(?<!")\{\{\s*(messages|last_user_message|session_id)\s*\}\}(?!")/g, '"{{$1}}"');
  return fill(JSON.parse(quoted));
}

function stepsFrom(list: unknown, model: string | null): Step[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isRecord).map((s) => {
    const call = isRecord(s.tool_call) ? s.tool_call : s;
    const name = typeof call.name === "string" ? call.name : typeof call.toolName === "string" ? call.toolName : "tool";
    const args = call.arguments ?? call.input ?? call.args ?? null;
    return { ...emptyStep(), toolCall: { name, arguments: typeof args === "string" ? parseMaybe(args) : args }, toolResult: s.tool_result ?? s.result ?? s.output ?? null, modelName: model };
  });
}

const parseMaybe = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

async function httpJson(target: TargetRow, req: TargetRequest): Promise<TargetReply> {
  const { text } = await post(target, req, JSON.stringify(fillTemplate(target.requestTemplate ?? "{}", req)));
  const body = parseMaybe(text);
  const reply = valueAt(body, target.replyPath ?? "reply");
  if (reply !== undefined && reply !== null && typeof reply !== "string") throw new TargetError(`target ${target.name}: ${target.replyPath} holds ${typeof reply}, not text`);
  const steps = target.stepsPath ? stepsFrom(valueAt(body, target.stepsPath), target.model) : [];
  return checkReply(target, { text: (reply as string | null | undefined) ?? "", steps, inputTokens: 0, outputTokens: 0, model: target.model });
}

/** The UI message stream an AI SDK chat route answers (`toUIMessageStreamResponse`): server-sent `data:` lines of chunks. */
export function readUiMessageStream(text: string, model: string | null): { text: string; steps: Step[]; error: string | null } {
  let reply = "";
  let error: string | null = null;
  const calls = new Map<string, Step>();
  const steps: Step[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (!data || data === "[DONE]") continue;
    const chunk = parseMaybe(data);
    if (!isRecord(chunk)) continue;
    if (chunk.type === "text-delta" && typeof chunk.delta === "string") reply += chunk.delta;
    else if (chunk.type === "reasoning-delta" && typeof chunk.delta === "string") {
      const last = steps.at(-1);
      if (last && last.thinking !== null && last.toolCall === null) last.thinking += chunk.delta;
      else steps.push({ ...emptyStep(), thinking: chunk.delta, modelName: model });
    } else if (chunk.type === "tool-input-available" && typeof chunk.toolCallId === "string") {
      const step = { ...emptyStep(), toolCall: { id: chunk.toolCallId, name: String(chunk.toolName ?? "tool"), arguments: chunk.input ?? null }, modelName: model };
      calls.set(chunk.toolCallId, step);
      steps.push(step);
    } else if ((chunk.type === "tool-output-available" || chunk.type === "tool-output-error") && typeof chunk.toolCallId === "string") {
      const step = calls.get(chunk.toolCallId);
      if (step) step.toolResult = chunk.type === "tool-output-error" ? { error: chunk.errorText ?? "error" } : (chunk.output ?? null);
    } else if (chunk.type === "error") error = String(chunk.errorText ?? "error");
  }
  return { text: reply, steps, error };
}

async function aiSdkUi(target: TargetRow, req: TargetRequest): Promise<TargetReply> {
  const messages = req.turns.filter((t) => t.role !== "system").map((t, i) => ({ id: `m${i}`, role: t.role, parts: [{ type: "text", text: t.content }] }));
  const { text: body } = await post(target, req, JSON.stringify({ id: req.sessionId, messages, trigger: "submit-message" }));
  const read = readUiMessageStream(body, target.model);
  if (read.error) throw new TargetError(`target ${target.name} streamed an error: ${read.error.slice(0, 300)}`);
  return checkReply(target, { text: read.text, steps: read.steps, inputTokens: 0, outputTokens: 0, model: target.model });
}

const clients: Record<TargetKind, (target: TargetRow, req: TargetRequest) => Promise<TargetReply>> = { openai_chat: openAIChat, http_json: httpJson, ai_sdk_ui: aiSdkUi };

/** The target's reply to the conversation so far; a kind with no client is an error, never another kind's client. */
export function callTarget(target: TargetRow, req: TargetRequest): Promise<TargetReply> {
  const client = Object.hasOwn(clients, target.kind) ? clients[target.kind] : undefined;
  if (!client) return Promise.reject(new TargetError(`target ${target.name} has kind ${String(target.kind)}, which no client serves (${targetKinds.join(", ")})`));
  return client(target, req);
}
