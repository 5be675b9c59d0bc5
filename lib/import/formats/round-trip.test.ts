// test-stores: no-store (it converts and checks files in memory: lib/import reaches the store only to save, which these tests never do)
/**
 * Property: any valid Turnscope file, converted to each format the adapters read, imports exactly
 * as the Turnscope file does. A small seeded generator (no dependency) makes conversations with a
 * system prompt, user/assistant turns, tool calls with their results and the answer as output
 * content, awkward text (quotes, commas, newlines, non-ASCII, JSON-looking words) and meta.
 */
import { describe, expect, it } from "vitest";
import { checkUpload } from "../index";

type Call = { name: string; arguments: Record<string, string>; id?: string };
type Msg = { role: "system" | "user" | "assistant"; content: string; calls?: Call[]; results?: string[] };
type Conv = { name: string; meta: Record<string, string>; messages: Msg[] };

/** mulberry32: a tiny seeded generator, so a failure names the seed that reproduces it. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pickOne = <T,>(xs: T[]) => xs[int(xs.length)];
  const words = ["flight", "Lisbon", "naïve", "日本", "x,y", 'say "hi"', "a\nb", "{not json", "[1]", "tab\there", "émoji 🙂", "100%", "null"];
  const text = () => {
    // Never empty or only spaces, never starting with { or [ (a tool result like that is read as JSON).
    const body = Array.from({ length: 1 + int(5) }, () => pickOne(words)).join(" ");
    return `w${int(1000)} ${body}`;
  };
  return { int, text, pickOne };
}

function generate(seed: number, withIds: boolean): Conv[] {
  const r = rng(seed);
  return Array.from({ length: 1 + r.int(4) }, (_, ci) => {
    const messages: Msg[] = [];
    if (r.int(2)) messages.push({ role: "system", content: r.text() });
    for (let t = 0; t < 1 + r.int(3); t++) {
      messages.push({ role: "user", content: r.text() });
      const n = r.int(3);
      const calls = Array.from({ length: n }, (_, k) => ({
        name: r.pickOne(["search", "book", "get_weather"]),
        arguments: { q: r.text(), n: String(r.int(9)) },
        ...(withIds ? { id: `call_${ci}_${t}_${k}` } : {}),
      }));
      messages.push({ role: "assistant", content: r.text(), ...(n ? { calls, results: calls.map(() => r.text()) } : {}) });
    }
    return { name: `conv-${seed}-${ci}`, meta: { task: `t${r.int(100)}`, label: r.pickOne(["good", "bad, really", 'say "x"']) }, messages };
  });
}

/** The Turnscope file: tool turns are one assistant message with call, result and output steps. */
function toTurnscope(convs: Conv[]): unknown {
  return {
    conversations: convs.map((c) => ({
      name: c.name,
      meta: c.meta,
      messages: c.messages.map((m) =>
        m.calls
          ? {
              role: m.role,
              content: m.content,
              steps: [...m.calls.map((call) => ({ tool_call: call })), ...(m.results ?? []).map((r) => ({ tool_result: r })), { output_content: m.content }],
            }
          : { role: m.role, content: m.content },
      ),
    })),
  };
}

function toOpenAi(convs: Conv[]): string {
  return convs
    .map((c) =>
      JSON.stringify({
        name: c.name,
        metadata: c.meta,
        messages: c.messages.flatMap((m): unknown[] =>
          m.calls
            ? [
                { role: "assistant", content: null, tool_calls: m.calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } })) },
                ...m.calls.map((call, k) => ({ role: "tool", tool_call_id: call.id, content: m.results?.[k] })),
                { role: "assistant", content: [{ type: "text", text: m.content }] },
              ]
            : [{ role: m.role, content: m.content }],
        ),
      }),
    )
    .join("\n");
}

function toShareGpt(convs: Conv[]): string {
  const from = { system: "system", user: "human", assistant: "gpt" } as const;
  return JSON.stringify(
    convs.map((c) => {
      const system = c.messages.find((m) => m.role === "system");
      return {
        name: c.name,
        ...c.meta,
        ...(system ? { system: system.content } : {}),
        conversations: c.messages
          .filter((m) => m.role !== "system")
          .flatMap((m): unknown[] =>
            m.calls
              ? [
                  ...m.calls.map((call) => ({ from: "function_call", value: JSON.stringify({ name: call.name, arguments: call.arguments }) })),
                  ...(m.results ?? []).map((r) => ({ from: "observation", value: r })),
                  { from: "gpt", value: m.content },
                ]
              : [{ from: from[m.role], value: m.content }],
          ),
      };
    }),
  );
}

function toAnthropic(convs: Conv[]): string {
  return JSON.stringify(
    convs.map((c) => {
      const system = c.messages.find((m) => m.role === "system");
      return {
        name: c.name,
        meta: c.meta,
        ...(system ? { system: [{ type: "text", text: system.content }] } : {}),
        messages: c.messages
          .filter((m) => m.role !== "system")
          .flatMap((m): unknown[] =>
            m.calls
              ? [
                  { role: "assistant", content: m.calls.map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: call.arguments })) },
                  { role: "user", content: m.calls.map((call, k) => ({ type: "tool_result", tool_use_id: call.id, content: m.results?.[k] })) },
                  { role: "assistant", content: [{ type: "text", text: m.content }] },
                ]
              : [{ role: m.role, content: m.role === "assistant" ? [{ type: "text", text: m.content }] : m.content }],
          ),
      };
    }),
  );
}

/** ATIF: an assistant tool turn is an agent step with the calls and their observation, then one with the answer. */
function toAtif(convs: Conv[]): string {
  return convs
    .map((c, ci) =>
      JSON.stringify({
        schema_version: "ATIF-v1.6",
        session_id: `s-${ci}`,
        agent: { name: "agent", version: "1" },
        steps: c.messages
          .flatMap((m): Array<Record<string, unknown>> => {
            if (m.role !== "assistant") return [{ source: m.role, message: m.content }];
            if (!m.calls) return [{ source: "agent", message: m.content }];
            const ids = m.calls.map((call, k) => call.id ?? `c${k}`);
            // The observation lists the results in reverse: they are stored in the order of their calls.
            const results = m.calls.map((_, k) => ({ source_call_id: ids[k], content: m.results?.[k] })).reverse();
            return [
              { source: "agent", message: "", tool_calls: m.calls.map((call, k) => ({ tool_call_id: ids[k], function_name: call.name, arguments: call.arguments })), observation: { results } },
              { source: "agent", message: m.content },
            ];
          })
          .map((step, i) => ({ step_id: i + 1, ...step })),
      }),
    )
    .join("\n");
}

const csvField = (v: string) => `"${v.replace(/"/g, '""')}"`;
/** CSV carries text only: tool turns are left out of the conversations this format is checked with. */
function toCsv(convs: Conv[]): string {
  const rows = convs.flatMap((c) => c.messages.map((m) => [c.name, m.role, m.content, c.meta.task, c.meta.label].map(csvField).join(",")));
  return ["conversation_id,role,content,task,label", ...rows].join("\r\n") + "\r\n";
}

const importOf = (text: string) => {
  const r = checkUpload(new TextEncoder().encode(text), { maxBytes: 10_000_000 });
  if (!r.ok) throw new Error(JSON.stringify(r.errors.slice(0, 3)));
  return r;
};

const SEEDS = Array.from({ length: 40 }, (_, i) => i + 1);

describe("round trip: a Turnscope file converted to each format imports identically", () => {
  // The format each file is named as. Some files are another format's too: one JSON Lines line is a
  // JSON document (a Turnscope conversation when it has no tool calls), and Anthropic messages of text blocks only, with no system, are OpenAI content parts.
  const anthropicMarked = (convs: Conv[]) => convs.some((c) => c.messages.some((m) => m.role === "system" || m.calls));
  it.each([
    ["openai_chat (JSON Lines of {name, metadata, messages})", toOpenAi, true, (c: Conv[]) => (c.length > 1 ? "jsonl" : c[0].messages.some((m) => m.calls) ? "openai_chat" : "turnscope")],
    ["sharegpt", toShareGpt, false, () => "sharegpt"],
    ["anthropic_messages", toAnthropic, true, (c: Conv[]) => (anthropicMarked(c) ? "anthropic_messages" : "openai_chat")],
  ] as const)("%s", (_, convert, withIds, formatOf) => {
    for (const seed of SEEDS) {
      const convs = generate(seed, withIds);
      const format = formatOf(convs);
      const expected = importOf(JSON.stringify(toTurnscope(convs)));
      const actual = importOf(convert(convs));
      expect({ seed, format: actual.format }).toEqual({ seed, format });
      expect({ seed, conversations: actual.conversations }).toEqual({ seed, conversations: expected.conversations });
      expect(actual.notImported).toEqual([]);
    }
  });

  it("atif (JSON Lines of trajectories: the same messages and steps; meta holds the session, the agent and each agent step's fields)", () => {
    const steps = (r: ReturnType<typeof importOf>) => r.conversations.map((c) => c.messages.map((m) => ({ role: m.role, content: m.content, steps: m.steps.map((st) => ({ ...st, modelName: null })) })));
    for (const seed of SEEDS) {
      const convs = generate(seed, true);
      const expected = importOf(JSON.stringify(toTurnscope(convs)));
      const actual = importOf(toAtif(convs));
      expect({ seed, format: actual.format, counts: actual.counts }).toEqual({ seed, format: "atif", counts: expected.counts });
      expect({ seed, messages: steps(actual) }).toEqual({ seed, messages: steps(expected) });
      expect(actual.notImported).toEqual([]);
    }
  });

  it("csv (text-only conversations)", () => {
    for (const seed of SEEDS) {
      const convs = generate(seed, true).map((c) => ({ ...c, messages: c.messages.map(({ role, content }) => ({ role, content })) }));
      const expected = importOf(JSON.stringify(toTurnscope(convs)));
      const actual = importOf(toCsv(convs));
      expect({ seed, format: actual.format, conversations: actual.conversations }).toEqual({ seed, format: "csv", conversations: expected.conversations });
    }
  });
});
