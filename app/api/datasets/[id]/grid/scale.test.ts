/**
 * Reads whose cost is the page's, not the dataset's (issue 52): totals kept as rows are written, a
 * large filtered page's total estimated and labelled so, keyset paging by cursor, and the meta indexes a
 * filter or sort starts on a large dataset — the pages the same before and after they exist.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { COUNT_WINDOW } from "@/db/repositories/grid";
import { listMetaIndexNames, META_INDEX_MIN_CONVERSATIONS, metaIndexName, metaIndexesSettled } from "@/db/repositories/meta-indexes";
import { rawRows, rawRun } from "@/db/store";
import { call } from "@/lib/testing/http/call";
import { createTestDataset } from "@/lib/testing/seed/results";
import * as dataset from "../route";
import * as conversations from "../conversations/route";
import * as grid from "./route";

const onPg = Boolean(process.env.DATABASE_URL);

/**
 * `n` conversations at positions 0…n-1, written by one SQL statement each (as a bulk import leaves them),
 * each with a user and an assistant message and a step. Meta: `k` is "a" for every 4th conversation, "b"
 * otherwise; `n` is (i × 7) mod 10, absent for every 5th (sorts put those last).
 */
async function grow(datasetId: number, n: number): Promise<void> {
  const series = onPg ? `generate_series(0, ${n - 1}) as g(i)` : `(with recursive s(i) as (select 0 union all select i + 1 from s where i < ${n - 1}) select i from s) as g`;
  const meta = onPg
    ? "case when g.i % 5 = 0 then json_build_object('k', case when g.i % 4 = 0 then 'a' else 'b' end) else json_build_object('k', case when g.i % 4 = 0 then 'a' else 'b' end, 'n', (g.i * 7) % 10) end"
    : "case when g.i % 5 = 0 then json_object('k', case when g.i % 4 = 0 then 'a' else 'b' end) else json_object('k', case when g.i % 4 = 0 then 'a' else 'b' end, 'n', (g.i * 7) % 10) end";
  await rawRun(`insert into conversations (dataset_id, position, name, meta) select cast(? as integer), g.i, 'c' || g.i, ${meta} from ${series}`, [datasetId]);
  for (const [position, role] of [[0, "user"], [1, "assistant"]] as const) {
    await rawRun(`insert into messages (conversation_id, dataset_id, position, role, content) select id, dataset_id, ${position}, '${role}', 'hello' from conversations where dataset_id = ?`, [datasetId]);
  }
  await rawRun("insert into steps (message_id, conversation_id, dataset_id, position, output_content) select id, conversation_id, dataset_id, 0, 'out' from messages where dataset_id = ? and role = 'assistant'", [datasetId]);
}

async function gridPage(datasetId: number, query: string) {
  const res = await call(grid.GET, "GET", `/api/datasets/${datasetId}/grid?${query}`, { params: { id: datasetId } });
  return {
    status: res.status,
    json: res.json,
    positions: ((res.json ?? []) as Array<{ position: number }>).map?.((r) => r.position) ?? [],
    total: Number(res.headers.get("x-total-count")),
    kind: res.headers.get("x-total-count-kind"),
    cursor: res.headers.get("x-next-cursor"),
  };
}

/** What the meta of position i holds (see `grow`). */
const metaOf = (i: number) => ({ k: i % 4 === 0 ? "a" : "b", n: i % 5 === 0 ? undefined : (i * 7) % 10 });

describe("totals kept as rows are written", () => {
  it("counts a dataset's conversations, messages and steps through inserts and deletes, and the grid's levels use them", async () => {
    const { id } = await createTestDataset("kept counts");
    const other = await createTestDataset("kept counts, another");
    await grow(id, 30);
    await grow(other.id, 7);
    const read = async () => (await call(dataset.GET, "GET", `/api/datasets/${id}`, { params: { id } })).json as { conversation_count: number; message_count: number; step_count: number };
    expect(await read()).toMatchObject({ conversation_count: 30, message_count: 60, step_count: 30 });
    expect((await gridPage(id, "level=conversation&limit=5")).total).toBe(30);
    expect((await gridPage(id, "level=message&limit=5")).total).toBe(30);
    expect((await gridPage(id, "level=step&limit=5")).total).toBe(30);
    // A conversation deleted takes its messages and steps with it (cascades count too).
    await rawRun("delete from conversations where dataset_id = ? and position < 10", [id]);
    expect(await read()).toMatchObject({ conversation_count: 20, message_count: 40, step_count: 20 });
    const page = await gridPage(id, "level=conversation&limit=5");
    expect([page.total, page.kind]).toEqual([20, "exact"]);
    const [row] = await rawRows<{ conversations: number }>("select conversations from dataset_counts where dataset_id = ?", [other.id]);
    expect(Number(row.conversations)).toBe(7);
  });
});

describe("a large dataset", () => {
  const size = Math.max(COUNT_WINDOW, META_INDEX_MIN_CONVERSATIONS) + 2000;
  let id: number;
  beforeAll(async () => {
    id = (await createTestDataset("large")).id;
    await grow(id, size);
  }, 120_000);

  it("estimates a filtered page's total from its first conversations and says so; small datasets are counted", async () => {
    const filtered = await gridPage(id, `filter=${encodeURIComponent("meta.k==a")}&limit=50`);
    expect(filtered.status).toBe(200);
    expect(filtered.kind).toBe("estimated");
    // Every 4th conversation matches: a quarter of the window, scaled to the dataset.
    expect(filtered.total).toBe(Math.round(((COUNT_WINDOW / 4) * size) / COUNT_WINDOW));
    expect(filtered.positions.slice(0, 3)).toEqual([0, 4, 8]);
    // A short last page knows the total exactly.
    const last = await gridPage(id, `filter=${encodeURIComponent("meta.k==a")}&limit=50&offset=${size / 4 - 10}`);
    expect([last.positions.length, last.total, last.kind]).toEqual([10, size / 4, "exact"]);

    const small = (await createTestDataset("small")).id;
    await grow(small, 40);
    const counted = await gridPage(small, `filter=${encodeURIComponent("meta.k==a")}&limit=5`);
    expect([counted.total, counted.kind]).toEqual([10, "exact"]);
  });

  it("pages by cursor through the same rows as by offset, filtered or not", async () => {
    for (const filter of ["", `&filter=${encodeURIComponent("meta.k==a")}`]) {
      const byOffset = await gridPage(id, `limit=40&offset=120${filter}`);
      const start = await gridPage(id, `limit=40&offset=80${filter}`);
      expect(start.cursor).toBeTruthy();
      const byCursor = await gridPage(id, `limit=40&cursor=${start.cursor}${filter}`);
      expect(byCursor.positions).toEqual(byOffset.positions);
      expect(byCursor.positions).toHaveLength(40);
    }
    // The list of conversations too.
    const list = async (q: string) => call(conversations.GET, "GET", `/api/datasets/${id}/conversations?${q}`, { params: { id } });
    const first = await list("limit=25&offset=500");
    expect((first.json as Array<{ position: number }>).map((c) => c.position)).toEqual(Array.from({ length: 25 }, (_, i) => 500 + i));
    // An offset within the last page, and past the end.
    expect((((await list(`limit=25&offset=${size - 3}`)).json) as Array<{ position: number }>).map((c) => c.position)).toEqual([size - 3, size - 2, size - 1]);
    expect((await list(`limit=25&offset=${size + 5}`)).json).toEqual([]);
    const next = await list(`limit=25&cursor=${first.headers.get("x-next-cursor")}`);
    expect((next.json as Array<{ position: number }>).map((c) => c.position)).toEqual(Array.from({ length: 25 }, (_, i) => 525 + i));
    expect(Number(next.headers.get("x-total-count"))).toBe(size);
  });

  it("refuses a cursor it did not give, one sent with an offset, or with a sort", async () => {
    const { cursor } = await gridPage(id, "limit=10");
    for (const q of ["cursor=bm90LWEtY3Vyc29y", `cursor=${cursor}&offset=10`, `cursor=${cursor}&sort=meta.n`, `cursor=${cursor}&level=message`]) {
      const res = await gridPage(id, `limit=10&${q}`);
      expect(res.status, q).toBe(422);
    }
    expect((await gridPage(id, "limit=10&cursor=not%20base64")).status).toBe(400);
  });

  it("builds an index for a meta filter and sort on first use, and answers the same pages with it", async () => {
    const filter = `filter=${encodeURIComponent("meta.k==a;meta.n>=5")}&limit=30`;
    const sortDesc = "sort=-meta.n&limit=30&offset=0";
    const sortAsc = `sort=meta.n&limit=30&offset=${size - 40}`;
    const before = [await gridPage(id, filter), await gridPage(id, sortDesc), await gridPage(id, sortAsc)];
    await metaIndexesSettled();
    const names = await listMetaIndexNames();
    for (const [path, use] of [["k", "text"], ["n", "number"], ["n", "desc"], ["n", "asc"]] as const) expect(names).toContain(metaIndexName(path, use));
    const after = [await gridPage(id, filter), await gridPage(id, sortDesc), await gridPage(id, sortAsc)];
    expect(after.map((p) => p.positions)).toEqual(before.map((p) => p.positions));

    // What the pages should be, from what was written.
    const all = Array.from({ length: size }, (_, i) => i);
    expect(after[0].positions).toEqual(all.filter((i) => metaOf(i).k === "a" && (metaOf(i).n ?? -1) >= 5).slice(0, 30));
    const byN = (descending: boolean) => (a: number, b: number) => {
      const [x, y] = [metaOf(a).n, metaOf(b).n];
      if (x === undefined || y === undefined) return (x === undefined ? 1 : 0) - (y === undefined ? 1 : 0) || a - b;
      return (descending ? y - x : x - y) || a - b;
    };
    expect(after[1].positions).toEqual([...all].sort(byN(true)).slice(0, 30));
    // The end of an ascending sort: the last values, then the rows without one in grid order.
    expect(after[2].positions).toEqual([...all].sort(byN(false)).slice(size - 40, size - 10));
  }, 120_000);
});
