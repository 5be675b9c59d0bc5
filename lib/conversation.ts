/**
 * The one shape of a conversation — conversation → message → step — that every way a conversation comes
 * in (an import, OTLP traces, a generation) produces, the store writes (db/repositories/conversation-writes.ts)
 * and the judge and the checks read back (lib/conversation-tree.ts: the same shape, placed). On the ground
 * floor beside lib/vocabulary.ts: it imports nothing else.
 */
import type { MessageRole } from "@/lib/vocabulary";

/** One step of a message: what the agent thought, the tool it called and what came back, what it output, by which model and agent. */
export type Step = {
  thinking: string | null;
  toolCall: unknown;
  toolResult: unknown;
  outputContent: string | null;
  outputStructured: unknown;
  modelName: string | null;
  agentName: string | null;
};

/** One message: who spoke, the text, anything else the source said about it (`meta`), and its steps in order. */
export type Message = { role: MessageRole; content: string | null; meta: unknown; steps: Step[] };

/** One conversation, its messages in order. `meta` and `agents` are kept exactly as the source gave them. */
export type Conversation = { name: string | null; description: string | null; meta: unknown; agents: unknown; messages: Message[] };

/** Where a stored message or step sits: its row id and its position among its siblings. */
export type Placed = { id: number; position: number };
