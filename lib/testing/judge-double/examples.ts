/**
 * The judge double following few-shot examples (issue 39): when a prompt carries the alignment's marked
 * examples section, it answers like the example nearest the item being judged — the one sharing the most
 * words with the rest of the prompt (Jaccard over lowercase words of three letters or more; the first
 * example on a tie). Deterministic, so a test knows what examples that encode the labels do (they raise
 * agreement) and what noisy examples do (they do not).
 */
import { EXAMPLES_BEGIN, EXAMPLES_END } from "@/lib/align/few-shot";

export type ExampleMatch = { verdict: Record<string, unknown>; example: number; similarity: number };

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []);

/** The examples of a prompt's section, each its quoted text and its verdict. */
export function parseExamples(section: string): Array<{ text: string; verdict: Record<string, unknown> }> {
  const out: Array<{ text: string; verdict: Record<string, unknown> }> = [];
  for (const chunk of section.split(/^--- Example \d+ ---$/m).slice(1)) {
    const at = chunk.lastIndexOf("\nVerdict: ");
    if (at < 0) continue;
    try {
      const verdict = JSON.parse(chunk.slice(at + "\nVerdict: ".length).split("\n")[0]) as unknown;
      if (verdict && typeof verdict === "object" && !Array.isArray(verdict)) out.push({ text: chunk.slice(0, at), verdict: verdict as Record<string, unknown> });
    } catch {
      // An example whose verdict is not JSON is not followed.
    }
  }
  return out;
}

/** The verdict of the example nearest the judged item, or undefined when the text has no examples section. */
export function nearestExample(text: string): ExampleMatch | undefined {
  const start = text.indexOf(EXAMPLES_BEGIN);
  if (start < 0) return undefined;
  const end = text.indexOf(EXAMPLES_END, start);
  if (end < 0) return undefined;
  const examples = parseExamples(text.slice(start, end));
  if (examples.length === 0) return undefined;
  const item = words(text.slice(0, start) + text.slice(end + EXAMPLES_END.length));
  let best: ExampleMatch | undefined;
  examples.forEach((e, i) => {
    const mine = words(e.text);
    let shared = 0;
    for (const w of mine) if (item.has(w)) shared++;
    const similarity = shared / (mine.size + item.size - shared || 1);
    if (!best || similarity > best.similarity) best = { verdict: e.verdict, example: i + 1, similarity };
  });
  return best && { ...best, verdict: { reasoning: `like example ${best.example}`, ...best.verdict } };
}
