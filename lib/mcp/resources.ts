/** The MCP resource: a conversation's transcript as text, the `@HISTORY` text the judge reads. */
import { getConversation } from "@/lib/datasets";
import { AppError } from "@/lib/errors";
import { loadConversationTrees } from "@/lib/metrics/metrics";
import { transcript } from "@/lib/metrics/transcript";

export const TRANSCRIPT_TEMPLATE = "turnscope://conversations/{id}/transcript";

export function transcriptUri(conversationId: number): string {
  return `turnscope://conversations/${conversationId}/transcript`;
}

const transcriptPattern = /^turnscope:\/\/conversations\/(\d{1,10})\/transcript$/;

/** The conversation id a transcript URI names, or a 400 for any other URI. */
export function conversationIdOf(uri: string): number {
  const m = transcriptPattern.exec(uri);
  const id = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(id) || id < 1 || id > 2 ** 31 - 1) {
    throw new AppError("bad_request", `Unknown resource ${uri.slice(0, 200)}: read ${TRANSCRIPT_TEMPLATE}`, [{ path: "uri", message: `must look like ${TRANSCRIPT_TEMPLATE}` }]);
  }
  return id;
}

/** The transcript of every message and step, `[role]: content` lines with steps summarised (404 for an unknown conversation). */
export async function readTranscript(uri: string): Promise<{ name: string; text: string }> {
  const id = conversationIdOf(uri);
  const conversation = await getConversation(id);
  const tree = (await loadConversationTrees([id])).get(id);
  const text = tree ? (transcript(tree.messages, tree.messages.length - 1) ?? "(no messages)") : "(no messages)";
  return { name: conversation.label, text };
}
