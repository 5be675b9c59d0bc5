/**
 * Message trees (Open Assistant's export, `{message_tree_id, tree_state, prompt: <message>}` per line,
 * each message `{message_id, parent_id, text, role: prompter|assistant, rank?, emojis?, labels?,
 * review_count, …, replies: [...]}`): several ranked replies per prompt.
 *
 * Each root-to-leaf path becomes a conversation. Chosen over "the preferred path with the others as
 * alternatives" because the replies a human ranked below the best are exactly what a ranking
 * agreement needs judged: as messages they get verdicts; as alternatives in meta they would not.
 * A message on several paths is stored once per path; every copy after the first is marked
 * `shared_prefix: true`, so per-message figures can count it once. Every message keeps its
 * `message_id`, `parent_id`, `rank` (0 = best among siblings), votes (`emojis`, `labels`) and review
 * counts in its meta; the conversation's meta has the `message_tree_id`, so sibling replies (same
 * `parent_id`) can be compared across conversations.
 */
import { countText } from "../count-text";
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";

type Rec = Record<string, unknown>;
type Unit = { value: unknown; line?: number; path: string };

const roleOf: Record<string, string> = { prompter: "user", assistant: "assistant", user: "user", system: "system" };

function isTreeMessage(value: unknown): value is Rec {
  return isRecord(value) && typeof value.message_id === "string" && typeof value.text === "string" && typeof value.role === "string";
}

/** The tree's root message: the record's `prompt`, or the record itself when it is a message with replies. */
function rootOf(record: unknown): Rec | undefined {
  if (!isRecord(record)) return undefined;
  if (isTreeMessage(record.prompt)) return record.prompt;
  if (isTreeMessage(record) && Array.isArray(record.replies)) return record;
  return undefined;
}

/** True when every record is a message tree. */
export function isMessageTreeFile(units: Unit[]): boolean {
  return units.length > 0 && units.every((u) => rootOf(u.value) !== undefined);
}

function messageMeta(node: Rec, sharedPrefix: boolean): Rec {
  const meta: Rec = {};
  for (const [k, v] of Object.entries(node)) if (k !== "text" && k !== "role" && k !== "replies") meta[k] = v;
  if (sharedPrefix) meta.shared_prefix = true;
  return meta;
}

/** Convert message trees: one conversation per root-to-leaf path. */
export function convertMessageTrees(units: Unit[]): Normalised {
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  let nodes = 0;
  let copies = 0;
  for (const unit of units) {
    const record = unit.value as Rec;
    const root = rootOf(record) as Rec;
    const treeMeta: Rec = {};
    if (root !== record) for (const [k, v] of Object.entries(record)) if (k !== "prompt") treeMeta[k] = v;
    if (treeMeta.message_tree_id === undefined) treeMeta.message_tree_id = root.message_tree_id ?? root.message_id;
    const seen = new Set<Rec>();
    const paths: Rec[][] = [];
    const walk = (node: Rec, path: Rec[]) => {
      nodes++;
      const here = [...path, node];
      const replies = Array.isArray(node.replies) ? node.replies.filter(isTreeMessage) : [];
      if (!replies.length) paths.push(here);
      for (const r of replies) walk(r, here);
    };
    walk(root, []);
    paths.forEach((path, p) => {
      const fresh: Rec[] = [];
      const messages = path.map((node) => {
        const shared = seen.has(node);
        if (shared) copies++;
        else {
          seen.add(node);
          const { replies: _replies, ...own } = node;
          fresh.push(own);
        }
        return { role: roleOf[node.role as string] ?? node.role, content: node.text, meta: messageMeta(node, shared) };
      });
      const leaf = path[path.length - 1];
      conversations.push({
        name: `${String(root.text).slice(0, 60)}${paths.length > 1 ? ` (path ${p + 1}/${paths.length})` : ""}`,
        meta: { ...treeMeta, path: p, paths: paths.length, leaf_message_id: leaf.message_id },
        messages,
      });
      sources.push({ path: unit.path, messagesPath: unit.path ? `${unit.path}.prompt` : "prompt", line: unit.line, rawMessages: fresh, wholeConversation: true });
    });
  }
  return {
    format: "message_tree",
    data: { conversations },
    sources,
    structural: ["message_id", "parent_id", "message_tree_id", "lang", "tree_state"],
    records: {
      inFile: nodes,
      unit: "tree messages",
      skipped: {},
      reasons: [
        `each root-to-leaf path of the ${countText(units.length)} trees is a conversation, so a message on several paths is stored once per path (${countText(copies)} copies, marked shared_prefix in their meta)`,
      ],
    },
  };
}
