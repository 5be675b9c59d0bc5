/**
 * Finds the JSON object in a reply from a provider that ignored structured output: the whole text,
 * a fenced ```json block, or the first balanced {...} in prose.
 */
export function extractJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const candidates: string[] = [text.trim()];
  for (const m of text.matchAll(/```(?:json|JSON)?\s*\n?([\s\S]*?)```/g)) candidates.push(m[1].trim());
  const balanced = firstBalancedObject(text);
  if (balanced) candidates.push(balanced);
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      const value: unknown = JSON.parse(candidate);
      if (value !== null && typeof value === "object") return { ok: true, value };
    } catch {
      // try the next candidate
    }
  }
  return { ok: false };
}

function firstBalancedObject(text: string): string | undefined {
  const start = text.indexOf("{");
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}
