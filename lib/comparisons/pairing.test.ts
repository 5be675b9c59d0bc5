/** Which replies a comparison puts side by side: by source (conversations, next_turn turns, repeats) and siblings. */
import { describe, expect, it } from "vitest";
import { pairBySource, pairSiblings, type MetaMessage, type PairingTree } from "./pairing";

let nextId = 1;
const msg = (role: MetaMessage["role"], content: string, meta: unknown = null): MetaMessage => ({ id: nextId++, position: 0, role, content, steps: [], meta });
const conv = (id: number, messages: MetaMessage[], meta: unknown = null): PairingTree => ({ conversation: { id, goal: null, agents: null, meta }, messages });

describe("pairBySource", () => {
  it("conversation level: the messages both share from the start are the input, the rest each side's reply", () => {
    const source = conv(1, [msg("user", "hi"), msg("assistant", "hello"), msg("user", "book it"), msg("assistant", "booked")]);
    const replayed = conv(10, [msg("user", "hi"), msg("assistant", "hello"), msg("user", "book it"), msg("assistant", "cannot")], { source_conversation_id: 1, repeat: 0 });
    const [pair] = pairBySource([replayed], [source], "conversation");
    expect(pair.a.conversationId).toBe(10);
    expect(pair.b.conversationId).toBe(1);
    expect(pair.input.messages.map((m) => m.content)).toEqual(["hi", "hello", "book it"]);
    expect(pair.a.replies.map((m) => m.content)).toEqual(["cannot"]);
    expect(pair.b.replies.map((m) => m.content)).toEqual(["booked"]);
  });

  it("message level: a next_turn reply against the source turn it re-answers; repeats each against the source", () => {
    const original = msg("assistant", "original");
    const source = conv(1, [msg("user", "q"), original]);
    const repeats = [0, 1].map((r) => conv(20 + r, [msg("user", "q"), msg("assistant", `candidate ${r}`, { source_message_id: original.id })], { source_conversation_id: 1, repeat: r }));
    const pairs = pairBySource([source], repeats, "message");
    expect(pairs.map((p) => [p.a.messageId, p.b.replies[0].content])).toEqual([
      [original.id, "candidate 0"],
      [original.id, "candidate 1"],
    ]);
    expect(pairs[0].input.messages.map((m) => m.content)).toEqual(["q"]);
  });

  it("two generations with repeats: repeat k against repeat k; unrelated conversations are not paired", () => {
    const gen = (id: number, repeat: number) => conv(id, [msg("user", "q"), msg("assistant", `r${id}`)], { source_conversation_id: 7, repeat });
    const pairs = pairBySource([gen(1, 0), gen(2, 1)], [gen(3, 1), gen(4, 0), conv(9, [msg("user", "other")])], "conversation");
    expect(pairs.map((p) => [p.a.conversationId, p.b.conversationId])).toEqual([
      [1, 4],
      [2, 3],
    ]);
  });
});

describe("pairSiblings", () => {
  it("every two replies to one message, a reply stored on several paths once", () => {
    const path = (first: string, reply: string) => conv(nextId++, [msg("user", "prompt", { message_id: "p" }), msg("assistant", reply, { message_id: first, parent_id: "p" })]);
    const trees = [path("x", "X"), path("x", "X"), path("y", "Y"), path("z", "Z")];
    const pairs = pairSiblings(trees);
    expect(pairs.map((p) => [p.a.replies[0].content, p.b.replies[0].content])).toEqual([
      ["X", "Y"],
      ["X", "Z"],
      ["Y", "Z"],
    ]);
    expect(pairs.every((p) => p.groupKey === "p" && p.input.messages.length === 1)).toBe(true);
  });
});
