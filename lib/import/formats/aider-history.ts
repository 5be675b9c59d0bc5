/**
 * Aider chat histories (`.aider.chat.history.md`): Markdown, not JSON. Each session opens with
 * `# aider chat started at <time>`; `#### ` lines are what the person typed; `> ` lines are Aider's own output
 * (its banner, token counts, applied edits, and its confirmation prompts with the answer after them, `[Yes]: y`);
 * everything else is the model's reply, its reasoning inside `<thinking-content-<hash>>` tags. Read as a person
 * reads it: one conversation per session; a `/code <text>` command that Aider echoes as `#### <text>` is one
 * prompt; a `#### ` line answering Aider's yes/no question (or writing the question with its answer) is a
 * confirmation, not a prompt; reasoning is a
 * thinking step. Aider's output is kept in meta (per reply `aider_output`, before the first prompt `startup`),
 * with the confirmations and their answers.
 */
import { isRecord } from "../issues";
import type { Normalised } from "./normalised";
import type { ConversationSource } from "./source-paths";

type Rec = Record<string, unknown>;

const SESSION = "# aider chat started at ";

/** True when the text starts as an Aider history does (its first non-empty line), read without scanning the file. */
export function isAiderHistory(text: string): boolean {
  return text.slice(0, 400).trimStart().startsWith(SESSION);
}

const question = /\(Y\)es\/\(N\)o/;
const shortAnswer = /^(y|n|yes|no|a|all|s|skip|skip all|d|don't ask again)$/i;
/** A yes/no question and its answer on one line: `Add file to the chat? (Y)es/(N)o/… [Yes]: all`. */
const questionWithAnswer = /^(.*\(Y\)es\/\(N\)o.*?\[[^\]]*\]):\s*(.*)$/;
const thinkingTag = /<thinking-content-([0-9a-f]+)>([\s\S]*?)<\/thinking-content-\1>/g;

type Block = { kind: "user" | "aider" | "text"; lines: string[] };

/** Split a session's lines into runs of one kind (typed input, Aider output, reply text). */
function blocksOf(lines: string[]): Block[] {
  const blocks: Block[] = [];
  // A blank line ends typed input and Aider output (two prompts in a row are two blocks); inside a reply it is kept.
  let ended = false;
  for (const raw of lines) {
    const line = raw.replace(/ {2}$/, "");
    const last = blocks[blocks.length - 1];
    if (line.trim() === "") {
      if (last?.kind === "text") last.lines.push("");
      else ended = true;
      continue;
    }
    const kind: Block["kind"] = line.startsWith("#### ") ? "user" : line.startsWith("> ") || line === ">" ? "aider" : "text";
    const body = kind === "user" ? line.slice(5) : kind === "aider" ? line.slice(2) : line;
    if (last && last.kind === kind && !ended) last.lines.push(body);
    else blocks.push({ kind, lines: [body] });
    ended = false;
  }
  return blocks;
}

/** The reply's text without its reasoning, and the reasoning as thinking steps. */
function replyOf(text: string): { content: string; thinking: string[] } {
  const thinking: string[] = [];
  const content = text.replace(thinkingTag, (_m, _hash: string, inner: string) => {
    thinking.push(inner.trim());
    return "";
  });
  return { content: content.trim(), thinking };
}

/** Convert an Aider history to conversations, one per session. */
export function convertAiderHistory(text: string): Normalised {
  const sessions = text.split(/^(?=# aider chat started at )/m).filter((s) => s.trim().startsWith(SESSION));
  const conversations: unknown[] = [];
  const sources: ConversationSource[] = [];
  const skipped: Record<string, number> = {};
  let records = 0;
  for (const session of sessions) {
    const [head, ...rest] = session.split("\n");
    const startedAt = head.slice(SESSION.length).trim();
    const blocks = blocksOf(rest);
    const messages: Rec[] = [];
    const meta: Rec = { started_at: startedAt };
    const startup: string[] = [];
    const confirmations: Rec[] = [];
    let lastAider: string[] | undefined;
    let lastPrompt: Rec | undefined;
    // What the session says, piece by piece, for the text accounting (the Markdown markers are form, not text).
    const pieces: string[] = [];
    records += blocks.length;
    for (const block of blocks) {
      if (block.kind === "aider") {
        const lines = block.lines;
        pieces.push(...lines);
        for (const l of lines) {
          const asked = questionWithAnswer.exec(l);
          if (asked) confirmations.push({ question: asked[1], answer: asked[2] });
        }
        const holder = messages[messages.length - 1];
        if (!holder) startup.push(...lines);
        else {
          const m = (isRecord(holder.meta) ? holder.meta : (holder.meta = {})) as Rec;
          m.aider_output = [...(Array.isArray(m.aider_output) ? (m.aider_output as string[]) : []), ...lines];
        }
        lastAider = lines;
        continue;
      }
      if (block.kind === "user") {
        const typed = block.lines.join("\n").trim();
        pieces.push(typed);
        const lastLine = lastAider?.[lastAider.length - 1] ?? "";
        // Aider asked a yes/no question and this is the answer: a confirmation, not a prompt.
        if (lastAider && question.test(lastLine) && shortAnswer.test(typed)) {
          confirmations.push({ question: lastLine, answer: typed });
          skipped["confirmation answer"] = (skipped["confirmation answer"] ?? 0) + 1;
          lastAider = undefined;
          continue;
        }
        // Aider writes the question with the answer typed to it as a `#### ` line of its own
        // (`#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all`): a confirmation too.
        const written = block.lines.map((l) => questionWithAnswer.exec(l.trim()));
        if (written.every((w) => w !== null)) {
          for (const w of written) confirmations.push({ question: w[1], answer: w[2] });
          skipped["confirmation answer"] = (skipped["confirmation answer"] ?? 0) + written.length;
          lastAider = undefined;
          continue;
        }
        lastAider = undefined;
        // `/code <text>` (and `/ask`, `/architect`) is written again as `#### <text>`: one prompt.
        const echoOf = lastPrompt && typeof lastPrompt.content === "string" ? /^\/(code|ask|architect|chat-mode \w+)\s+([\s\S]*)$/.exec(lastPrompt.content) : null;
        if (echoOf && echoOf[2].trim() === typed && messages[messages.length - 1] === lastPrompt) {
          lastPrompt.meta = { ...(isRecord(lastPrompt.meta) ? lastPrompt.meta : {}), command: `/${echoOf[1]}`, as_typed: lastPrompt.content };
          lastPrompt.content = typed;
          skipped["prompt written twice"] = (skipped["prompt written twice"] ?? 0) + 1;
          continue;
        }
        const message: Rec = { role: "user", content: typed };
        if (typed.startsWith("/")) message.meta = { command: typed.split(/\s/)[0] };
        messages.push(message);
        lastPrompt = message;
        continue;
      }
      const reply = replyOf(block.lines.join("\n"));
      pieces.push(reply.content, ...reply.thinking);
      if (!reply.content && !reply.thinking.length) continue;
      lastAider = undefined;
      const message: Rec = { role: "assistant", content: reply.content || null };
      if (reply.thinking.length) message.steps = [...reply.thinking.map((t) => ({ thinking: t })), ...(reply.content ? [{ output_content: reply.content }] : [])];
      messages.push(message);
    }
    if (startup.length) meta.startup = startup;
    const model = startup.map((l) => /^Main model: (.*)$/.exec(l)?.[1]).find(Boolean);
    if (model) meta.model = model;
    const version = startup.map((l) => /^Aider (v[\d.]+\S*)$/.exec(l)?.[1]).find(Boolean);
    if (version) meta.aider_version = version;
    if (confirmations.length) meta.confirmations = confirmations;
    if (!messages.length) {
      skipped["session without a prompt"] = (skipped["session without a prompt"] ?? 0) + 1;
      continue;
    }
    conversations.push({ name: `Aider session ${startedAt}`, meta, messages });
    sources.push({ path: "", messagesPath: "", rawMessages: pieces.filter(Boolean), wholeConversation: true });
  }
  return {
    format: "aider_history",
    data: { conversations },
    sources,
    records: {
      inFile: records,
      unit: `blocks in ${sessions.length} sessions`,
      skipped,
      reasons: ["`#### ` lines are prompts, `> ` lines Aider's own output (kept in meta), the rest the model's replies; one conversation per session"],
    },
  };
}
