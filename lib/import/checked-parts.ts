/**
 * A checked upload sent from the input pool's thread in pieces (lib/input-pool.ts): receiving a message
 * from a thread copies all of it in one go on the receiving thread, and 400,000 messages in one message
 * held the request loop for a second. Split here into pieces of at most PART_ITEMS messages and steps —
 * a conversation of 200,000 steps included — and put back together on the other side, in order.
 */
import type { CheckedUpload } from "./check";

type Conversation = Extract<CheckedUpload, { ok: true }>["conversations"][number];
type Message = Conversation["messages"][number];
type Step = NonNullable<Message["steps"]>[number];

/** A conversation without its messages, messages (some without their steps yet), or steps of the last message. */
type Op = { c: Omit<Conversation, "messages"> } | { m: Message[] } | { s: Step[] };

/** Messages and steps per piece: a few milliseconds to receive. */
export const PART_ITEMS = 4000;

/** The upload's conversations as pieces, and the upload without them. */
export function splitChecked(checked: CheckedUpload, send: (part: Op[]) => void): CheckedUpload {
  if (!checked.ok) return checked;
  let part: Op[] = [];
  let items = 0;
  const flush = () => {
    if (part.length) send(part);
    part = [];
    items = 0;
  };
  const room = () => PART_ITEMS - items;
  for (const conversation of checked.conversations) {
    const { messages, ...rest } = conversation;
    part.push({ c: rest });
    items++;
    let batch: Message[] = [];
    const flushBatch = () => {
      if (batch.length) part.push({ m: batch });
      batch = [];
    };
    for (const message of messages) {
      const steps = message.steps ?? [];
      if (items + 1 + steps.length <= PART_ITEMS) {
        batch.push(message);
        items += 1 + steps.length;
        continue;
      }
      flushBatch();
      if (room() < 1) flush();
      if (steps.length < PART_ITEMS) {
        flush();
        batch.push(message);
        items += 1 + steps.length;
        continue;
      }
      // A message with more steps than a piece holds: the message, then its steps a piece at a time.
      part.push({ m: [{ ...message, steps: [] }] });
      items++;
      for (let i = 0; i < steps.length; i += PART_ITEMS) {
        flush();
        part.push({ s: steps.slice(i, i + PART_ITEMS) });
        items += Math.min(PART_ITEMS, steps.length - i);
      }
      flush();
    }
    flushBatch();
    if (items >= PART_ITEMS) flush();
  }
  flush();
  return { ...checked, conversations: [] };
}

/** The upload with its conversations put back from the pieces. */
export function joinChecked(output: unknown, parts: unknown[]): CheckedUpload {
  const checked = output as CheckedUpload;
  if (!checked.ok || parts.length === 0) return checked;
  const conversations: Conversation[] = [];
  for (const part of parts as Op[][]) {
    for (const op of part) {
      if ("c" in op) conversations.push({ ...op.c, messages: [] } as Conversation);
      else if ("m" in op) conversations[conversations.length - 1].messages.push(...op.m);
      else {
        const messages = conversations[conversations.length - 1].messages;
        const last = messages[messages.length - 1];
        for (const step of op.s) last.steps.push(step);
      }
    }
  }
  return { ...checked, conversations };
}
