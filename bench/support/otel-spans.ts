/**
 * The spans of bench/otel-ingest.bench.ts: agents' GenAI spans (an invoke_agent span, two chat spans
 * carrying the growing history, an execute_tool span per turn, three turns a conversation, 300
 * conversations in flight at once), encoded as OTLP protobuf export requests of 512 spans.
 */
import { randomBytes } from "node:crypto";
import { encodeProtobufExport } from "@/lib/otel/decode";

export const BATCH = 512;
const ACTIVE = 300;

/** Random ids, as SDKs make them (sequential ones would insert into the span index's last page only). */
const id = (bytes: number) => randomBytes(bytes);
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: value } });

type Conv = { key: string; turn: number; history: unknown[] };
let convSeq = 0;
const newConv = (): Conv => ({ key: `bench-${process.pid}-${++convSeq}`, turn: 0, history: [] });

let clock = BigInt(Date.now()) * BigInt(1_000_000);
const tick = () => (clock += BigInt(1_000_000));

/** One user turn of an agent: 4 spans in one trace. */
function turnSpans(c: Conv): unknown[] {
  const traceId = id(16);
  const agentId = id(8);
  const user = { role: "user", parts: [{ type: "text", content: `Question ${c.turn} of ${c.key}: where is my order and can I change the delivery address to the office?` }] };
  c.history.push(user);
  const call = { role: "assistant", parts: [{ type: "tool_call", id: `call-${c.turn}`, name: "lookup_order", arguments: { order: c.key, turn: c.turn } }] };
  const result = { role: "tool", parts: [{ type: "tool_call_response", id: `call-${c.turn}`, response: { status: "shipped", eta: "tomorrow", carrier: "DHL", tracking: `TRK${c.turn}${c.key}` } }] };
  const answer = { role: "assistant", parts: [{ type: "text", content: `Your order ${c.key} ships tomorrow with DHL; I changed the address as asked (turn ${c.turn}).` }] };
  const span = (name: string, attributes: unknown[], parent?: Buffer) => {
    const start = tick();
    return { traceId, spanId: name.startsWith("invoke_agent") ? agentId : id(8), parentSpanId: parent, name, kind: 1, startTimeUnixNano: start.toString(), endTimeUnixNano: (start + BigInt(800_000)).toString(), attributes };
  };
  const common = [str("gen_ai.conversation.id", c.key), str("gen_ai.request.model", "gpt-4o-mini"), int("gen_ai.usage.input_tokens", 300), int("gen_ai.usage.output_tokens", 40)];
  const spans = [
    span("invoke_agent support", [str("gen_ai.operation.name", "invoke_agent"), str("gen_ai.agent.name", "support"), str("gen_ai.conversation.id", c.key)]),
    span("chat gpt-4o-mini", [...common, str("gen_ai.operation.name", "chat"), str("gen_ai.input.messages", JSON.stringify(c.history)), str("gen_ai.output.messages", JSON.stringify([call]))], agentId),
    span("execute_tool lookup_order", [str("gen_ai.operation.name", "execute_tool"), str("gen_ai.tool.name", "lookup_order"), str("gen_ai.tool.call.id", `call-${c.turn}`), str("gen_ai.tool.call.result", JSON.stringify(result.parts[0].response))], agentId),
    span("chat gpt-4o-mini", [...common, str("gen_ai.operation.name", "chat"), str("gen_ai.input.messages", JSON.stringify([...c.history, call, result])), str("gen_ai.output.messages", JSON.stringify([answer]))], agentId),
  ];
  c.history.push(call, result, answer);
  c.turn++;
  return spans;
}

const active: Conv[] = Array.from({ length: ACTIVE }, newConv);
let next = 0;
const pending: unknown[] = [];
/** The next export request of BATCH spans. */
export function batch(): Uint8Array {
  while (pending.length < BATCH) {
    const i = next++ % ACTIVE;
    pending.push(...turnSpans(active[i]));
    if (active[i].turn === 3) active[i] = newConv();
  }
  const spans = pending.splice(0, BATCH);
  return encodeProtobufExport({
    resourceSpans: [{ resource: { attributes: [str("service.name", "bench-agent"), str("service.version", "1.0.0")] }, scopeSpans: [{ scope: { name: "bench" }, spans }] }],
  });
}

