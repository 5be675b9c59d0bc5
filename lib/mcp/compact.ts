/**
 * Shapes for an agent's small context: long texts clipped with the number of characters left out, JSON
 * values inlined only while short, verdicts as one value and a reason, lists as pages that say where the
 * next one starts.
 */

/** Characters a text field keeps unless the caller asks for more (`max_chars`). */
export const DEFAULT_MAX_CHARS = 600;

/** `text` cut to `max` characters, saying how many were left out; null stays null. */
export function clip(text: string | null | undefined, max: number): string | null {
  if (text === null || text === undefined) return null;
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/** A JSON value as is while its text is short, else its JSON text clipped. */
export function clipJson(value: unknown, max: number): unknown {
  if (value === null || value === undefined) return null;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length <= max ? value : clip(text, max);
}

/** Drop the keys whose value is null, undefined, an empty array or an empty object. */
export function dropEmpty<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(o).filter(([, v]) => {
      if (v === null || v === undefined) return false;
      if (Array.isArray(v)) return v.length > 0;
      if (typeof v === "object") return Object.keys(v).length > 0;
      return true;
    }),
  ) as Partial<T>;
}

/** A result's verdict in two fields: the value (score, pass/fail, number, text or the JSON object) and the judge's reasoning, clipped. */
export function verdict(result: unknown, max: number): { value: unknown; reasoning: string | null } {
  if (result === null || typeof result !== "object" || Array.isArray(result)) return { value: clipJson(result, max), reasoning: null };
  const r = result as Record<string, unknown>;
  const reasoning = typeof r.reasoning === "string" ? clip(r.reasoning, max) : null;
  if ("score" in r && typeof r.score === "number") return { value: r.score, reasoning };
  if ("value" in r) return { value: clipJson(r.value, max), reasoning };
  const { reasoning: _dropped, ...rest } = r;
  void _dropped;
  return { value: clipJson(rest, max), reasoning };
}

/** Paging fields of a list: how many there are and where the next page starts (null: this is the last). */
export function paging(total: number, offset: number, returned: number): { total: number; offset: number; next_offset: number | null } {
  return { total, offset, next_offset: offset + returned < total ? offset + returned : null };
}
