/**
 * One OTLP/JSON export of one GenAI `chat` span, sent to the trace receiver's route handler in process
 * (tests of the trace store): a user question and the assistant's answer, in conversation `key` of dataset
 * (service) `service`. Each call gets new trace and span ids and a later start.
 */
import { expect } from "vitest";
import { POST } from "@/app/api/otel/v1/traces/route";
import { drainInbox } from "@/lib/otel/inbox";

let seq = 0;
const hex = (n: number, len: number) => n.toString(16).padStart(len, "0");
const attrs = (o: Record<string, string>) => Object.entries(o).map(([key, v]) => ({ key, value: { stringValue: v } }));

/** The OTLP/JSON export of one chat span (see the file's head) and its trace id. */
export function chatSpanExport(opts: { service: string; key: string; answer: string; question?: string; name?: string }): { body: string; traceId: string } {
  const start = BigInt(1_780_000_000_000_000_000) + BigInt(++seq) * BigInt(1_000_000);
  const traceId = hex(++seq + 0x5200, 32);
  const span = {
    traceId,
    spanId: hex(++seq + 0x5200, 16),
    name: opts.name ?? "chat m",
    kind: 1,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + BigInt(5_000_000)).toString(),
    attributes: attrs({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "m",
      "gen_ai.conversation.id": opts.key,
      "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: opts.question ?? `Question of ${opts.key}` }] }]),
      "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: opts.answer }], finish_reason: "stop" }]),
    }),
    status: {},
  };
  const body = { resourceSpans: [{ resource: { attributes: attrs({ "service.name": opts.service }) }, scopeSpans: [{ scope: { name: "test" }, spans: [span] }] }] };
  return { body: JSON.stringify(body), traceId };
}

/** Post an OTLP/JSON export to the route handler; its answer (the spans may still be in the trace inbox). */
export async function postExport(body: string): Promise<Response> {
  return POST(new Request("http://localhost/api/otel/v1/traces", { method: "POST", headers: { "content-type": "application/json" }, body }), { params: Promise.resolve({}) });
}

/** Send the export (expecting 200) and wait until its spans are stored (the trace inbox, lib/otel/inbox.ts); its trace id. */
export async function sendChatSpan(opts: { service: string; key: string; answer: string; question?: string; name?: string }): Promise<string> {
  const { body, traceId } = chatSpanExport(opts);
  const res = await postExport(body);
  expect(res.status).toBe(200);
  await drainInbox();
  return traceId;
}
