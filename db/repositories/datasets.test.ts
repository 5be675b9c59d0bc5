/**
 * Conversation trees as the runner loads them: a queued batch loads all its conversations in three
 * queries (getConversationTrees); each tree must be that conversation's alone, in position order.
 */
import { describe, expect, it } from "vitest";
import { insertConversationFixture } from "@/lib/testing/seed/rows";
import { createDataset, deleteDataset, getConversationTree, getConversationTrees, getDataset, listDatasets } from "./datasets";

describe("getConversationTrees", () => {
  it("gives each conversation its own messages and steps in position order, with counts; unknown ids are absent", async () => {
    const dataset = await createDataset({ name: "trees", userId: "test" });
    const a = await insertConversationFixture(dataset.id, { position: 0, name: "a" });
    const b = await insertConversationFixture(dataset.id, { position: 1, name: "b" });
    const other = await createDataset({ name: "trees, other", userId: "test" });
    const c = await insertConversationFixture(other.id, { position: 0, name: "c" });
    const trees = await getConversationTrees([b.conversationId, a.conversationId, c.conversationId, b.conversationId, 999_999]);
    expect([...trees.keys()].sort((x, y) => x - y)).toEqual([a.conversationId, b.conversationId, c.conversationId]);
    for (const [fixture, name, datasetId] of [[a, "a", dataset.id], [b, "b", dataset.id], [c, "c", other.id]] as const) {
      const tree = trees.get(fixture.conversationId)!;
      expect(tree.conversation).toMatchObject({ id: fixture.conversationId, name, datasetId, messageCount: 3, stepCount: 2, meta: { channel: "web", n: [1, 2] } });
      expect(tree.messages.map((m) => [m.position, m.role, m.content, m.conversationId])).toEqual([
        [0, "user", "find x", fixture.conversationId],
        [1, "assistant", "found x", fixture.conversationId],
        [2, "user", "thanks", fixture.conversationId],
      ]);
      expect(tree.messages[1].meta).toEqual({ latency_ms: 12, nested: { ok: true } });
      expect(tree.messages[1].steps.map((s) => [s.position, s.messageId, s.toolCall, s.outputContent])).toEqual([
        [0, fixture.assistantMessageId, { name: "lookup", arguments: { q: "x" } }, null],
        [1, fixture.assistantMessageId, null, "done"],
      ]);
      expect(tree.messages[0].steps).toEqual([]);
      // One conversation alone loads to the same tree.
      expect(await getConversationTree({ id: fixture.conversationId })).toEqual(tree);
    }
    expect(await getConversationTree({ id: 999_999 })).toBeUndefined();
    expect((await getConversationTrees([])).size).toBe(0);
  });
});

describe("dataset counts", () => {
  it("follow every insert, whoever writes it, and no other dataset's delete changes them", async () => {
    const a = await createDataset({ name: "counts a", userId: "counts-test" });
    const b = await createDataset({ name: "counts b", userId: "counts-test" });
    const truth = async (id: number) => {
      const rows = await (await insertConversationFixture(id, { position: 1000 + Math.floor(Math.random() * 1e6) })).countRows();
      return { conversationCount: rows.conversations, messageCount: rows.messages, stepCount: rows.steps };
    };
    const listed = async () => {
      const { items } = await listDatasets({ limit: 50, offset: 0, userId: "counts-test" });
      return Object.fromEntries(items.map((d) => [d.id, { conversationCount: d.conversationCount, messageCount: d.messageCount, stepCount: d.stepCount }]));
    };
    const zero = { conversationCount: 0, messageCount: 0, stepCount: 0 };
    expect(await listed()).toEqual({ [a.id]: zero, [b.id]: zero });
    // Rows written straight to the tables (as another process's import would): the next read counts them.
    const afterOne = await truth(a.id);
    expect(afterOne).toEqual({ conversationCount: 1, messageCount: 3, stepCount: 2 });
    expect(await listed()).toEqual({ [a.id]: afterOne, [b.id]: zero });
    const afterTwo = await truth(a.id);
    expect(await listed()).toEqual({ [a.id]: afterTwo, [b.id]: zero });
    const bOne = await truth(b.id);
    expect(await listed()).toEqual({ [a.id]: afterTwo, [b.id]: bOne });
    expect(await getDataset({ id: a.id })).toMatchObject(afterTwo);
    expect(await getDataset({ id: b.id })).toMatchObject(bOne);
    // Deleting b (the dataset holding the highest ids) leaves a's counts as they are.
    expect(await deleteDataset({ id: b.id })).toBe(true);
    expect(await listed()).toEqual({ [a.id]: afterTwo });
    const afterThree = await truth(a.id);
    expect(afterThree).toEqual({ conversationCount: 3, messageCount: 9, stepCount: 6 });
    expect(await listed()).toEqual({ [a.id]: afterThree });
  });
});
