/**
 * Which replies a comparison puts side by side (issue 38.5), pure over loaded conversations:
 * `source_conversation` pairs a's and b's conversations that come from the same source (a generated
 * conversation's `meta.source_conversation_id`, or the source's own id), repeat by repeat when both sides
 * repeat; `siblings` pairs the replies to the same message within one side (message trees: Open
 * Assistant's `meta.parent_id`, one reply stored on several root-to-leaf paths counted once by
 * `meta.message_id`). Each pair carries the input both replies answer (the conversation before them)
 * and each side's reply.
 */
import type { ConversationTree, JudgeMessage } from "@/lib/conversation-tree";
import { isRecord, type EvaluationLevel } from "@/lib/vocabulary";

export type MetaMessage = JudgeMessage & { meta?: unknown };
export type PairingTree = { conversation: ConversationTree["conversation"] & { meta?: unknown }; messages: MetaMessage[] };
export type Side = { conversationId: number; messageId: number | null; replies: MetaMessage[] };
export type PlannedPair = { groupKey: string; a: Side; b: Side; input: ConversationTree };

const metaOf = (v: unknown, key: string): unknown => (isRecord(v) ? v[key] : undefined);
const keyText = (v: unknown): string | undefined => (typeof v === "string" || typeof v === "number" ? String(v) : undefined);

/** The conversation before message index `end` (exclusive): the input a reply there answers. */
function before(tree: PairingTree, end: number): ConversationTree {
  return { conversation: tree.conversation, messages: tree.messages.slice(0, Math.max(0, end)) };
}

const sameMessage = (x: MetaMessage, y: MetaMessage) => x.role === y.role && JSON.stringify(x.content) === JSON.stringify(y.content);

/** Two conversations of one source: the messages they share from the start are the input, the rest each side's reply. */
function conversationPair(groupKey: string, a: PairingTree, b: PairingTree): PlannedPair {
  let common = 0;
  while (common < a.messages.length && common < b.messages.length && sameMessage(a.messages[common], b.messages[common])) common++;
  // Conversations equal to the end still compare their last reply, not nothing.
  if (common === a.messages.length && common === b.messages.length && common > 0) {
    const lastReply = a.messages.findLastIndex((m) => m.role === "assistant");
    common = lastReply >= 0 ? lastReply : common;
  }
  return {
    groupKey,
    a: { conversationId: a.conversation.id, messageId: null, replies: a.messages.slice(common) },
    b: { conversationId: b.conversation.id, messageId: null, replies: b.messages.slice(common) },
    input: before(a, common),
  };
}

/**
 * Two conversations of one source, turn by turn: each assistant message of a against its counterpart in
 * b — the one it re-answers (a next_turn reply's `meta.source_message_id`), the one that re-answers it,
 * one re-answering the same source turn, or else the k-th assistant message against the k-th.
 */
function messagePairs(groupKey: string, a: PairingTree, b: PairingTree): PlannedPair[] {
  const assistants = (t: PairingTree) => t.messages.map((message, index) => ({ message, index })).filter((x) => x.message.role === "assistant");
  const sourceOf = (m: MetaMessage) => keyText(metaOf(m.meta, "source_message_id"));
  const bList = assistants(b);
  const out: PlannedPair[] = [];
  assistants(a).forEach(({ message, index }, k) => {
    const own = sourceOf(message);
    const match =
      bList.find((x) => own !== undefined && (String(x.message.id) === own || sourceOf(x.message) === own)) ??
      bList.find((x) => sourceOf(x.message) === String(message.id)) ??
      (own === undefined && bList.every((x) => sourceOf(x.message) === undefined) ? bList[k] : undefined);
    if (!match) return;
    out.push({
      groupKey: `${groupKey}:${own ?? message.id}`,
      a: { conversationId: a.conversation.id, messageId: message.id, replies: [message] },
      b: { conversationId: b.conversation.id, messageId: match.message.id, replies: [match.message] },
      input: before(a, index),
    });
  });
  return out;
}

/** Pairs of a's and b's conversations by source (see the module comment), at the metric's level. */
export function pairBySource(aTrees: readonly PairingTree[], bTrees: readonly PairingTree[], level: EvaluationLevel): PlannedPair[] {
  const bySource = (trees: readonly PairingTree[]) => {
    const out = new Map<string, PairingTree[]>();
    for (const t of trees) {
      const key = keyText(metaOf(t.conversation.meta, "source_conversation_id")) ?? String(t.conversation.id);
      out.set(key, [...(out.get(key) ?? []), t]);
    }
    return out;
  };
  const repeatOf = (t: PairingTree) => keyText(metaOf(t.conversation.meta, "repeat")) ?? "0";
  const bGroups = bySource(bTrees);
  const out: PlannedPair[] = [];
  for (const [source, aList] of bySource(aTrees)) {
    const bList = bGroups.get(source);
    if (!bList) continue;
    // One side single (the source itself): each repeat of the other against it; both repeated: repeat k against repeat k.
    const matched: Array<[PairingTree, PairingTree]> =
      aList.length === 1
        ? bList.map((b) => [aList[0], b])
        : bList.length === 1
          ? aList.map((a) => [a, bList[0]])
          : aList.flatMap((a) => bList.filter((b) => repeatOf(b) === repeatOf(a)).map((b): [PairingTree, PairingTree] => [a, b]));
    for (const [a, b] of matched) {
      const key = `source:${source}`;
      if (level === "message") out.push(...messagePairs(key, a, b));
      else out.push(conversationPair(key, a, b));
    }
  }
  return out;
}

/** Every two different replies to the same message within one side (message level). */
export function pairSiblings(trees: readonly PairingTree[], opts: { groupKey?: string; idKey?: string } = {}): PlannedPair[] {
  const groupKey = opts.groupKey ?? "parent_id";
  const idKey = opts.idKey ?? "message_id";
  // group → reply id → the first stored copy of that reply.
  const groups = new Map<string, Map<string, { tree: PairingTree; index: number; message: MetaMessage }>>();
  for (const tree of trees) {
    tree.messages.forEach((message, index) => {
      if (message.role !== "assistant") return;
      const group = keyText(metaOf(message.meta, groupKey));
      if (group === undefined) return;
      const replies = groups.get(group) ?? new Map<string, { tree: PairingTree; index: number; message: MetaMessage }>();
      groups.set(group, replies);
      const id = keyText(metaOf(message.meta, idKey)) ?? `message:${message.id}`;
      if (!replies.has(id)) replies.set(id, { tree, index, message });
    });
  }
  const out: PlannedPair[] = [];
  for (const [group, replies] of groups) {
    const list = [...replies.values()];
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const [x, y] = [list[i], list[j]];
        out.push({
          groupKey: group,
          a: { conversationId: x.tree.conversation.id, messageId: x.message.id, replies: [x.message] },
          b: { conversationId: y.tree.conversation.id, messageId: y.message.id, replies: [y.message] },
          input: before(x.tree, x.index),
        });
      }
    }
  }
  return out;
}
