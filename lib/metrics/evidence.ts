/**
 * Judge prompts as documents of fixed text and named pieces of evidence, and fitting such a document
 * into the judge model's context: when it is too long, the middle of the longest pieces is cut (with a
 * marker saying how much), never a piece marked `keep` (the final output). Pure: no I/O, no config.
 */

/** One item of conversation evidence (a message's text, a step's tool result…) that may be cut. */
export type Piece = {
  /** Names the item in the preview's `truncated` list, e.g. `@HISTORY: message 3 (assistant) step 2 tool_result`. */
  item: string;
  text: string;
  /** Never cut: the final output the judge is asked about. */
  keep: boolean;
};

/** Prompt text in order: plain strings are fixed (instructions, labels), pieces may be cut. */
export type Doc = Array<string | Piece>;

export type Truncation = { item: string; removed_characters: number };

/**
 * Estimated characters per token. Deliberately low (English prose runs nearer 4, JSON and code nearer
 * 3): an estimate that errs long cuts a little early instead of overflowing the judge's context.
 */
export const CHARS_PER_TOKEN = 3;

/** Never cut a piece shorter than this, nor below it: a few lines of each item stay readable. */
const MIN_KEPT_CHARS = 240;

export function piece(item: string, text: string, keep = false): Piece {
  return { item, text, keep };
}

export function isPiece(part: string | Piece): part is Piece {
  return typeof part !== "string";
}

/** The document as one string, uncut. */
export function docText(doc: Doc): string {
  return doc.map((p) => (typeof p === "string" ? p : p.text)).join("");
}

/** Items joined by a separator (like `Array.join`), as a document. */
export function joinDocs(docs: Doc[], separator: string): Doc {
  return docs.flatMap((d, i) => (i === 0 ? d : [separator, ...d]));
}

/** Prefix every piece's item name, e.g. with the variable it appears in. */
export function nameDoc(prefix: string, doc: Doc): Doc {
  return doc.map((p) => (typeof p === "string" ? p : { ...p, item: p.item ? `${prefix}: ${p.item}` : prefix }));
}

/** Apply `f` to the text of every part, fixed or piece. */
export function mapDocText(doc: Doc, f: (text: string) => string): Doc {
  return doc.map((p) => (typeof p === "string" ? f(p) : { ...p, text: f(p.text) }));
}

export function estimateTokens(characters: number): number {
  return Math.ceil(characters / CHARS_PER_TOKEN);
}

/** Tokens of a context window left for the prompt: the judge's reply needs room too. */
export function promptBudgetTokens(contextTokens: number): number {
  const reply = Math.min(2048, Math.floor(contextTokens / 4));
  return Math.max(1, contextTokens - reply);
}

function marker(removed: number): string {
  return `\n[… ${removed} characters cut here to fit the judge's context …]\n`;
}

/** Do not end a head (or start a tail) inside a surrogate pair. */
function safeCut(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return index > 0 && index < text.length && code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}

/** The text with its middle cut so that about `kept` characters remain around the marker. */
function cutMiddle(text: string, kept: number): { text: string; removed: number } {
  const headEnd = safeCut(text, Math.ceil(kept / 2));
  const tailStart = safeCut(text, text.length - Math.floor(kept / 2));
  const removed = tailStart - headEnd;
  return { text: `${text.slice(0, headEnd)}${marker(removed)}${text.slice(tailStart)}`, removed };
}

/** Whether cutting a piece down to `cap` characters saves anything (the marker costs characters too). */
function cutsAt(p: Piece, cap: number): boolean {
  return !p.keep && p.text.length > cap + marker(p.text.length).length;
}

function lengthAt(pieces: Piece[], fixed: number, cap: number): number {
  let total = fixed;
  for (const p of pieces) total += cutsAt(p, cap) ? cap + marker(p.text.length - cap).length : p.text.length;
  return total;
}

export type Fitted = { text: string; truncated: Truncation[] };

/**
 * The document as text of at most `maxChars` characters (counting `otherChars` already spent, e.g. the
 * system message). Cuts "water-fill" the longest pieces down to one common length, so short items are
 * untouched and every long one keeps its beginning and end. When even that cannot fit (the kept pieces
 * alone are too long), each cuttable piece keeps MIN_KEPT_CHARS and the text is longer than asked.
 */
export function fitDoc(doc: Doc, maxChars: number, otherChars = 0): Fitted {
  const pieces = doc.filter(isPiece);
  const fixed = otherChars + doc.reduce((n, p) => n + (typeof p === "string" ? p.length : 0), 0);
  const longest = pieces.reduce((n, p) => Math.max(n, p.keep ? 0 : p.text.length), 0);
  if (lengthAt(pieces, fixed, longest) <= maxChars) return { text: docText(doc), truncated: [] };
  // The largest cap that fits: lengthAt grows with the cap, so bisect.
  let lo = MIN_KEPT_CHARS;
  let hi = longest;
  if (lengthAt(pieces, fixed, lo) <= maxChars) {
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (lengthAt(pieces, fixed, mid) <= maxChars) lo = mid;
      else hi = mid - 1;
    }
  }
  const cap = lo;
  const truncated: Truncation[] = [];
  const text = doc
    .map((p) => {
      if (typeof p === "string") return p;
      if (!cutsAt(p, cap)) return p.text;
      const cut = cutMiddle(p.text, cap);
      truncated.push({ item: p.item, removed_characters: cut.removed });
      return cut.text;
    })
    .join("");
  return { text, truncated };
}
