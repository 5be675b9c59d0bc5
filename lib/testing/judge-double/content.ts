/**
 * Judge TEST DOUBLE — the `content` behaviour: verdicts and replies that VARY with what is judged.
 *
 * Not a model and not random: a score is read from plain features of the text (signs of help such as
 * "booked", "refunded", "here is", figures and references; signs of trouble such as "sorry", "cannot",
 * "error"), so the same conversation always gets the same verdict, a better conversation a better one,
 * and the reasoning says exactly which features decided it. With it a demo (scripts/demo.mjs) shows a
 * real distribution, a real comparison and a real agreement figure — still from a double, and it says so.
 *
 * A request without a response format (an agent under test, a simulated user) gets a reply made from the
 * last user message: a concrete answer to a detailed request, an apology to a vague one.
 */
import { synthesiseFromSchema, type Fill } from "./behaviours";

const HELP = /\b(booked|confirmed|refunded|refund issued|resolved|done|sent|updated|cancelled|rebooked|here is|here are|you can|i have|i've|reference|tracking)\b/gi;
const TROUBLE = /\b(sorry|unfortunately|cannot|can't|unable|don't know|not sure|error|failed|no idea|try again later)\b/gi;
/** Figures and references (a flight number, an amount, a date): concrete answers carry them. */
const SPECIFICS = /\b[A-Z]{2}\d{2,4}\b|\$\d+|\b\d{4}-\d{2}-\d{2}\b|\b\d+(\.\d+)?\b/g;

export type ContentScore = { quality: number; help: string[]; trouble: string[]; specifics: number };

/** The text a verdict is about: the judge prompt's user part (the system part is the same for every cell). */
function judgedText(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  const out: string[] = [];
  for (const m of messages) {
    if (typeof m !== "object" || m === null) continue;
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (role === "system") continue;
    if (typeof content === "string") out.push(content);
    else if (Array.isArray(content)) for (const part of content) if (typeof part?.text === "string") out.push(part.text);
  }
  return out.join("\n");
}

function unique(matches: RegExpMatchArray | null): string[] {
  return [...new Set((matches ?? []).map((m) => m.toLowerCase()))];
}

/** A score in [0.02, 0.98] from the text's features: 0.5, +0.1 a sign of help (up to 4), +0.03 a figure (up to 5), −0.17 a sign of trouble (up to 3). */
export function scoreText(text: string): ContentScore {
  const help = unique(text.match(HELP));
  const trouble = unique(text.match(TROUBLE));
  const specifics = Math.min(5, (text.match(SPECIFICS) ?? []).length);
  const raw = 0.5 + 0.1 * Math.min(help.length, 4) + 0.03 * specifics - 0.17 * Math.min(trouble.length, 3);
  return { quality: Math.round(Math.min(0.98, Math.max(0.02, raw)) * 100) / 100, help, trouble, specifics };
}

function reasoningOf(s: ContentScore): string {
  const listed = (words: string[]) => (words.length === 0 ? "none" : words.map((w) => `"${w}"`).join(", "));
  return (
    `Judge test double (not a model): ${s.quality} from the text's features — signs of help ${listed(s.help)}, ` +
    `signs of trouble ${listed(s.trouble)}, ${s.specifics} figure(s).`
  );
}

/** The completion's content for a request answered by the `content` behaviour. */
export function contentReply(body: { messages?: unknown; response_format?: unknown }): string {
  const rf = body.response_format as { type?: unknown; json_schema?: { schema?: unknown } } | undefined;
  if (rf && (rf.type === "json_schema" || rf.type === "json_object")) {
    const score = scoreText(judgedText(body.messages));
    const fill: Fill = { quality: score.quality, reasoning: reasoningOf(score) };
    const schema = rf.type === "json_schema" ? rf.json_schema?.schema : undefined;
    return JSON.stringify(schema === undefined ? { score: fill.quality, reasoning: fill.reasoning } : synthesiseFromSchema(schema, fill));
  }
  return agentReply(body.messages);
}

/** A small deterministic agent (and simulated user): answers from the last user message's features. */
export function agentReply(messages: unknown): string {
  const list = Array.isArray(messages) ? (messages as Array<{ role?: unknown; content?: unknown }>) : [];
  const system = list.filter((m) => m.role === "system").map((m) => String(m.content ?? "")).join("\n");
  // Playing the user (a simulator's instructions name its stop token): stop after a few turns.
  const stop = /###STOP###/.exec(system)?.[0];
  if (stop) return list.length >= 6 ? `Thanks, that is all I needed. ${stop}` : "Could you confirm the details, please?";
  const last = [...list].reverse().find((m) => m.role === "user");
  const text = typeof last?.content === "string" ? last.content : "";
  const words = text.split(/\s+/).filter(Boolean);
  const figures = text.match(SPECIFICS) ?? [];
  if (words.length >= 8 || figures.length > 0) {
    const ref = `TS${String(words.length * 37 + text.length).padStart(4, "0").slice(-4)}`;
    return `Done — I have booked and confirmed that for you${figures.length ? ` (${figures.slice(0, 2).join(", ")})` : ""}. Your reference is ${ref}; you can check it in your account.`;
  }
  return "Sorry, I can't help with that here. Please try again later.";
}
