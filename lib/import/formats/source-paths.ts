/**
 * Validation runs on the Turnscope shape, but a person fixes the file they uploaded. For converted
 * formats, this maps an issue path such as `conversations[0].messages[3].role` back to where that
 * value sits in the file (`messages[5].role` of line 7, `[2][5].role`, …).
 */
import type { ImportIssue } from "@/lib/schemas/imports";

export type ConversationSource = {
  /** Path of the conversation in the file; "" for the whole file or a JSON Lines line. */
  path: string;
  /** Path of its message list in the file. */
  messagesPath: string;
  /**
   * Converted message j → index of the file message it starts at, or a field of the record it came
   * from (`system`); absent when not converted.
   */
  messageSources?: Array<number | string>;
  /** JSON Lines: the file line. */
  line?: number;
  /** CSV: converted message j → its file line. */
  messageLines?: number[];
  /** The record as it is in the file, for counting the text it holds. */
  raw?: unknown;
  /** The record's message list as it is in the file. */
  rawMessages?: unknown[];
  /**
   * The file's units (records, events, tree nodes) are not one-to-one with the converted messages
   * (whole-file adapters): each unit's text is looked for anywhere in the converted conversation.
   */
  wholeConversation?: boolean;
};

const conversationPath = /^conversations\[(\d+)\](.*)$/;
const messagePath = /^\.messages\[(\d+)\](.*)$/;
// Fields a converted message shares with the file message; anything else (steps) has no one place there.
const sharedField = /^\.(role|content)\b/;

function join(base: string, rest: string): string {
  if (!base) return rest.replace(/^\./, "");
  return base + rest;
}

/** The issue with its path pointing into the uploaded file, and its line for JSON Lines. */
export function toSourceIssue(issue: ImportIssue, sources: ConversationSource[] | undefined): ImportIssue {
  const m = sources ? conversationPath.exec(issue.path) : null;
  const source = m ? sources?.[Number(m[1])] : undefined;
  if (!m || !source) return issue;
  const rest = m[2];
  let path: string;
  const msg = messagePath.exec(rest);
  if (msg) {
    const j = Number(msg[1]);
    const fileIndex = source.messageSources ? source.messageSources[j] : j;
    const tail = source.messageSources && !sharedField.test(msg[2]) ? "" : msg[2];
    if (source.messageLines) {
      // CSV: a message is a row; its line says where, the field name what.
      const line = source.messageLines[j];
      const located: ImportIssue = { ...issue, path: `(line ${line})${msg[2]}` };
      if (line !== undefined) located.line = line;
      return located;
    }
    path = typeof fileIndex === "string" ? join(source.path, `.${fileIndex}`) : join(source.messagesPath, `[${fileIndex ?? j}]${tail}`);
  } else {
    path = join(source.path, rest);
  }
  const located: ImportIssue = { ...issue, path: path || (source.line ? `(line ${source.line})` : "(root)") };
  if (source.line !== undefined) located.line = source.line;
  return located;
}
