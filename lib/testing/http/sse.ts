/** Read a whole SSE response (until the server closes it) into parsed events. */
export type ParsedEvent = { event: string; id?: string; data: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests index into event payloads

export async function readSse(res: Response, opts: { timeoutMs?: number } = {}): Promise<ParsedEvent[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const events: ParsedEvent[] = [];
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  for (;;) {
    if (Date.now() > deadline) {
      await reader.cancel();
      throw new Error(`SSE stream did not close in time; got ${events.length} events`);
    }
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const i = line.indexOf(":");
        fields[line.slice(0, i)] = line.slice(i + 1).trimStart();
      }
      if (fields.data !== undefined) events.push({ event: fields.event ?? "message", id: fields.id, data: JSON.parse(fields.data) });
    }
  }
  return events;
}
