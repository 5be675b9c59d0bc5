/**
 * The grid's message and step pages list exactly the rows of the dataset (or conversation) asked for,
 * in grid order — conversation position, then message position, then step position — whatever order
 * the rows were inserted in, page after page, with and without a sort on the conversation's meta.
 * The expected order is computed here from what was inserted, not read back from the database.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { rows, transaction } from "@/db/store";
import { conversationsTable, messagesTable, stepsTable } from "@/db/tables";
import { call } from "@/lib/testing/http/call";
import { createTestDataset } from "@/lib/testing/seed/results";
import * as grid from "./route";

type Role = "user" | "assistant" | "tool";
/** One conversation: its position, meta, and messages (role, position, step positions), each listed in insertion order. */
type ConvSpec = { position: number; rank?: number; messages: Array<{ position: number; role: Role; steps: number[] }> };

// Inserted out of position order at every level: conversations, messages and steps.
const specs: ConvSpec[] = [
  {
    position: 2,
    rank: 1,
    messages: [
      { position: 3, role: "assistant", steps: [1, 0] },
      { position: 0, role: "user", steps: [] },
      { position: 1, role: "assistant", steps: [] }, // an assistant message without steps
      { position: 2, role: "tool", steps: [0] }, // a step under a message that is not the assistant's
    ],
  },
  { position: 0, rank: 2, messages: [{ position: 1, role: "assistant", steps: [2, 0, 1] }, { position: 0, role: "user", steps: [] }] },
  { position: 3, messages: [{ position: 0, role: "user", steps: [] }] }, // no assistant message, no step, no rank
  {
    position: 1,
    rank: 1, // the same rank as position 2: the tie is broken by position
    messages: [
      { position: 1, role: "assistant", steps: [0] },
      { position: 0, role: "user", steps: [] },
      { position: 2, role: "assistant", steps: [1, 0] },
    ],
  },
];

type Inserted = { conversationId: number; conversationPosition: number; rank?: number; messageId: number; messagePosition: number; role: Role; stepId?: number; stepPosition?: number };

async function insert(datasetId: number, list: ConvSpec[]): Promise<Inserted[]> {
  return transaction(function* (tx) {
    const out: Inserted[] = [];
    for (const c of list) {
      const [conv] = yield* rows(
        tx.insert(conversationsTable).values({ datasetId, position: c.position, name: `c${c.position}`, meta: c.rank === undefined ? {} : { rank: c.rank } }).returning(),
      );
      for (const m of c.messages) {
        const [msg] = yield* rows(
          tx.insert(messagesTable).values({ conversationId: conv.id, datasetId, position: m.position, role: m.role, content: `m${c.position}.${m.position}` }).returning(),
        );
        const base = { conversationId: conv.id, conversationPosition: c.position, rank: c.rank, messageId: msg.id, messagePosition: m.position, role: m.role };
        if (m.steps.length === 0) out.push(base);
        for (const position of m.steps) {
          const [step] = yield* rows(
            tx.insert(stepsTable).values({ messageId: msg.id, conversationId: conv.id, datasetId, position, outputContent: `s${position}` }).returning(),
          );
          out.push({ ...base, stepId: step.id, stepPosition: position });
        }
      }
    }
    return out;
  });
}

let datasetId: number;
let inserted: Inserted[];

beforeAll(async () => {
  // Another dataset first, with rows at the same positions: none of them may show.
  const other = await createTestDataset("grid order, other");
  await insert(other.id, specs.slice(0, 2));
  datasetId = (await createTestDataset("grid order")).id;
  inserted = await insert(datasetId, specs);
  await insert(other.id, specs.slice(2));
});

const gridOrder = (a: Inserted, b: Inserted) =>
  a.conversationPosition - b.conversationPosition || a.messagePosition - b.messagePosition || (a.stepPosition ?? 0) - (b.stepPosition ?? 0);

/** Expected ids of a level, in grid order (optionally a conversation's, optionally by rank first). */
function expected(level: "message" | "step", opts: { conversationId?: number; byRank?: "asc" | "desc" } = {}): number[] {
  let list = inserted.filter((r) => (opts.conversationId === undefined || r.conversationId === opts.conversationId));
  list = level === "step" ? list.filter((r) => r.stepId !== undefined) : list.filter((r, i, all) => r.role === "assistant" && all.findIndex((x) => x.messageId === r.messageId) === i);
  const rankOrder = (a: Inserted, b: Inserted) => {
    if (!opts.byRank) return 0;
    // Rows without a value last either way.
    if (a.rank === undefined || b.rank === undefined) return (a.rank === undefined ? 1 : 0) - (b.rank === undefined ? 1 : 0);
    return opts.byRank === "asc" ? a.rank - b.rank : b.rank - a.rank;
  };
  return [...list].sort((a, b) => rankOrder(a, b) || gridOrder(a, b)).map((r) => (level === "step" ? r.stepId! : r.messageId));
}

async function page(query: string) {
  const res = await call(grid.GET, "GET", `/api/datasets/${datasetId}/grid?${query}`, { params: { id: datasetId } });
  expect(res.status, query).toBe(200);
  return { ids: (res.json as Array<{ entity_id: number }>).map((r) => r.entity_id), total: Number(res.headers.get("x-total-count")), json: res.json };
}

/** Every page of `limit` rows, concatenated. */
async function allPages(query: string, limit: number): Promise<number[]> {
  const ids: number[] = [];
  for (let offset = 0; ; offset += limit) {
    const p = await page(`${query}&limit=${limit}&offset=${offset}`);
    ids.push(...p.ids);
    if (p.ids.length < limit) return ids;
  }
}

describe("grid pages of messages and steps", () => {
  for (const level of ["step", "message"] as const) {
    it(`lists every ${level} of the dataset in grid order, and pages of any size add up to the same list`, async () => {
      const want = expected(level);
      expect(want.length).toBeGreaterThan(3);
      const one = await page(`level=${level}&limit=500`);
      expect(one.ids).toEqual(want);
      expect(one.total).toBe(want.length);
      for (const limit of [1, 2, 3]) expect(await allPages(`level=${level}`, limit), `limit ${limit}`).toEqual(want);
      const past = await page(`level=${level}&limit=5&offset=${want.length}`);
      expect(past.ids).toEqual([]);
      expect(past.total).toBe(want.length);
    });

    it(`lists one conversation's ${level}s, none for a conversation without any`, async () => {
      for (const conversationId of new Set(inserted.map((r) => r.conversationId))) {
        const want = expected(level, { conversationId });
        const got = await page(`level=${level}&conversation_id=${conversationId}&limit=500`);
        expect(got.ids, `conversation ${conversationId}`).toEqual(want);
        expect(got.total).toBe(want.length);
        expect(await allPages(`level=${level}&conversation_id=${conversationId}`, 2)).toEqual(want);
      }
    });

    it(`sorts ${level}s by their conversation's meta, ties and rows without a value in grid order`, async () => {
      expect(await allPages(`level=${level}&sort=meta.rank`, 2)).toEqual(expected(level, { byRank: "asc" }));
      expect(await allPages(`level=${level}&sort=-meta.rank`, 2)).toEqual(expected(level, { byRank: "desc" }));
      const filtered = await page(`level=${level}&filter=meta.rank==1&limit=500`);
      expect(filtered.ids).toEqual(expected(level).filter((id) => inserted.some((r) => r.rank === 1 && (level === "step" ? r.stepId : r.messageId) === id)));
      expect(filtered.total).toBe(filtered.ids.length);
    });
  }

  it("gives each step its message, conversation, position and its message's role", async () => {
    const got = (await page("level=step&limit=500")).json as Array<{ entity_id: number; message_id: number; conversation_id: number; position: number; role: string }>;
    for (const row of got) {
      const r = inserted.find((x) => x.stepId === row.entity_id)!;
      expect(row).toMatchObject({ message_id: r.messageId, conversation_id: r.conversationId, position: r.stepPosition, role: r.role });
    }
  });
});
