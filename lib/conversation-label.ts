/**
 * What a conversation is called where it has no name: an id from its meta (`task_id`, `id`,
 * `question_id`: the ids agent benchmarks and eval sets carry; with `trial` when runs repeat a task),
 * else the first words of its first user message, else its position. Pure, so the grid (server) and
 * the conversation panel (browser) agree.
 */

/** Meta keys read as a conversation's id, in order of preference, and the key naming a repeat. */
export const META_ID_KEYS = ["task_id", "id", "question_id"] as const;
export const META_LABEL_KEYS = [...META_ID_KEYS, "trial"] as const;

const WORDS_CHARS = 60;

const idText = (v: unknown): string | null =>
  (typeof v === "string" && v.trim()) ? v.trim() : typeof v === "number" && Number.isFinite(v) ? String(v) : null;

/** The meta id of a meta object as a label (`task_id 12 · trial 0`, `q-881`); null when it has none. */
export function metaIdLabel(meta: unknown): string | null {
  if (!meta || typeof meta !== "object" || Array.isArray(meta)) return null;
  const m = meta as Record<string, unknown>;
  for (const key of META_ID_KEYS) {
    const id = idText(m[key]);
    if (id === null) continue;
    // A bare number would read as a position: say which id it is.
    const label = /^\d+$/.test(id) ? `${key} ${id}` : id;
    const trial = idText(m.trial);
    return trial !== null ? `${label} · trial ${trial}` : label;
  }
  return null;
}

export function conversationLabel(c: { name: string | null; position: number; meta: unknown; firstUser: string | null }): string {
  if (c.name?.trim()) return c.name;
  const id = metaIdLabel(c.meta);
  if (id) return id;
  const words = (c.firstUser ?? "").replace(/\s+/g, " ").trim();
  if (words) return words.length > WORDS_CHARS ? `${words.slice(0, WORDS_CHARS - 1).trimEnd()}…` : words;
  return `Conversation ${c.position + 1}`;
}
