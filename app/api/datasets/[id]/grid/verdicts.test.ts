/**
 * Metric verdict filters and metric sorts served from latest_results (issue 52): the latest result of each
 * (metric, entity), kept by triggers as results are written and deleted, answers the same pages as finding
 * each row's latest result did, on a dataset past the count window, where a lone verdict's total is the
 * kept count (exact) instead of an estimate.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { COUNT_WINDOW } from "@/db/repositories/grid";
import { insertResultOnce } from "@/db/repositories/evaluation-results";
import { rawRows, rawRun } from "@/db/store";
import { call } from "@/lib/testing/http/call";
import { addTestResults, createTestDataset, createTestExecution, createTestMetric } from "@/lib/testing/seed/results";
import * as node from "@/app/api/evaluation-pipeline-nodes/[id]/route";
import * as grid from "./route";

const onPg = Boolean(process.env.DATABASE_URL);

async function gridPage(datasetId: number, query: string) {
  const res = await call(grid.GET, "GET", `/api/datasets/${datasetId}/grid?level=conversation&${query}`, { params: { id: datasetId } });
  expect(res.status, `${query}: ${res.text.slice(0, 300)}`).toBe(200);
  return {
    positions: (res.json as Array<{ position: number }>).map((r) => r.position),
    total: Number(res.headers.get("x-total-count")),
    kind: res.headers.get("x-total-count-kind"),
    cursor: res.headers.get("x-next-cursor"),
  };
}

const q = (filter: string) => `filter=${encodeURIComponent(filter)}`;

/** Conversations at positions 0…n-1 (meta `k`: "a" for every 4th), written by one statement as an import leaves them. */
async function grow(datasetId: number, n: number): Promise<Map<number, number>> {
  const series = onPg ? `generate_series(0, ${n - 1}) as g(i)` : `(with recursive s(i) as (select 0 union all select i + 1 from s where i < ${n - 1}) select i from s) as g`;
  const meta = onPg ? "json_build_object('k', case when g.i % 4 = 0 then 'a' else 'b' end)" : "json_object('k', case when g.i % 4 = 0 then 'a' else 'b' end)";
  await rawRun(`insert into conversations (dataset_id, position, name, meta) select cast(? as integer), g.i, 'c' || g.i, ${meta} from ${series}`, [datasetId]);
  const rows = await rawRows<{ id: number; position: number }>("select id, position from conversations where dataset_id = ?", [datasetId]);
  return new Map(rows.map((r) => [Number(r.position), Number(r.id)]));
}

type Latest = { status: "completed" | "failed" | "skipped"; score: number | null } | undefined;

/**
 * Results of one execution for the conversations `which` selects, written by one INSERT … SELECT per
 * status and score (the bulk path; triggers see many rows at once).
 */
async function writeResults(executionId: number, nodeId: number, datasetId: number, cells: Array<[position: number, status: "completed" | "failed" | "skipped", score: number | null]>) {
  const groups = new Map<string, number[]>();
  for (const [position, status, score] of cells) {
    const key = `${status}:${score}`;
    groups.set(key, [...(groups.get(key) ?? []), position]);
  }
  for (const [key, positions] of groups) {
    const [status, scoreText] = key.split(":");
    const score = scoreText === "null" ? null : Number(scoreText);
    for (let i = 0; i < positions.length; i += 5000) {
      const chunk = positions.slice(i, i + 5000);
      await rawRun(
        `insert into evaluation_results (execution_id, pipeline_node_id, dataset_id, entity_type, entity_id, conversation_id, score, status)
         select cast(? as integer), cast(? as integer), c.dataset_id, 'conversation', c.id, c.id, cast(? as double precision), ? from conversations c
         where c.dataset_id = ? and c.position in (${chunk.join(",")}) order by c.position`,
        [executionId, nodeId, score, status, datasetId],
      );
    }
  }
}

describe("verdict filters and metric sorts on a dataset past the count window", () => {
  const size = COUNT_WINDOW + 2000;
  let datasetId: number;
  let ids: Map<number, number>;
  let check: Awaited<ReturnType<typeof createTestMetric>>;
  let scored: Awaited<ReturnType<typeof createTestMetric>>;
  /** What each conversation's latest result of each metric is, as written (the test's own bookkeeping). */
  const latest = { check: new Map<number, Latest>(), scored: new Map<number, Latest>() };
  const positions = () => Array.from({ length: size }, (_, i) => i);
  const verdictOf = (l: Latest) => (l === undefined ? "none" : l.status === "failed" ? "failed" : l.status === "completed" && l.score === 1 ? "pass" : l.status === "completed" && l.score === 0 ? "fail" : "other");

  beforeAll(async () => {
    datasetId = (await createTestDataset("verdicts at scale")).id;
    ids = await grow(datasetId, size);
    check = await createTestMetric(datasetId, "conversation", "checkbox", "resolved");
    scored = await createTestMetric(datasetId, "conversation", "progress", "progress");
    // First run: every conversation but each 10th; a third fail, a rare few failed, a few skipped.
    const first = await createTestExecution(check);
    const cells: Array<[number, "completed" | "failed" | "skipped", number | null]> = [];
    for (const i of positions()) {
      if (i % 10 === 9) continue;
      const cell: [number, "completed" | "failed" | "skipped", number | null] = i % 97 === 5 ? [i, "failed", null] : i % 89 === 3 ? [i, "skipped", null] : [i, "completed", i % 3 === 0 ? 0 : 1];
      cells.push(cell);
      latest.check.set(i, { status: cell[1], score: cell[1] === "completed" ? cell[2] : null });
    }
    await writeResults(first.id, check.id, datasetId, cells);
    // A second run over every 7th conversation flips its verdict (its latest result wins), some by the runner's own write path.
    const second = await createTestExecution(check);
    const flips = positions().filter((i) => i % 7 === 0 && i % 10 !== 9);
    const flipped = (i: number): [number, "completed", number] => [i, "completed", latest.check.get(i)?.score === 1 ? 0 : 1];
    await writeResults(second.id, check.id, datasetId, flips.filter((i) => i >= 70).map(flipped));
    await addTestResults(flips.filter((i) => i < 70 && i % 2 === 0).map((i) => ({ executionId: second.id, node: check, entity: { type: "conversation" as const, id: ids.get(i)!, conversationId: ids.get(i)! }, score: flipped(i)[2], result: { value: flipped(i)[2] === 1 } })));
    await rawRun("update pipeline_executions set status = 'processing' where id = ?", [second.id]);
    for (const i of flips.filter((i) => i < 70 && i % 2 === 1)) {
      await insertResultOnce({ executionId: second.id, pipelineNodeId: check.id, datasetId, entityType: "conversation", entityId: ids.get(i)!, conversationId: ids.get(i)!, score: flipped(i)[2], status: "completed", result: { value: flipped(i)[2] === 1 } });
    }
    for (const i of flips) latest.check.set(i, { status: "completed", score: flipped(i)[2] });
    // A progress metric: scores with ties, every 6th none, every 11th failed.
    const third = await createTestExecution(scored);
    const scoreCells: Array<[number, "completed" | "failed" | "skipped", number | null]> = [];
    for (const i of positions()) {
      if (i % 6 === 1) continue;
      const cell: [number, "completed" | "failed" | "skipped", number | null] = i % 11 === 2 ? [i, "failed", null] : [i, "completed", ((i * 37) % 20) / 20];
      scoreCells.push(cell);
      latest.scored.set(i, { status: cell[1], score: cell[2] });
    }
    await writeResults(third.id, scored.id, datasetId, scoreCells);
  }, 180_000);

  const matching = (verdict: string, negate = false, extra: (i: number) => boolean = () => true) =>
    positions().filter((i) => (verdictOf(latest.check.get(i)) === verdict) !== negate && extra(i));

  it("filters on each verdict in grid order, with the kept count as an exact total", async () => {
    for (const verdict of ["pass", "fail", "failed", "none"]) {
      for (const negate of [false, true]) {
        const want = matching(verdict, negate);
        const first = await gridPage(datasetId, `${q(`metric.${check.id}${negate ? "!=" : "=="}${verdict}`)}&limit=50`);
        expect(first.positions, `${negate ? "!=" : "=="}${verdict}`).toEqual(want.slice(0, 50));
        expect([first.total, first.kind], `${negate ? "!=" : "=="}${verdict}`).toEqual([want.length, "exact"]);
        const deep = await gridPage(datasetId, `${q(`metric.${check.id}${negate ? "!=" : "=="}${verdict}`)}&limit=50&offset=${Math.max(0, want.length - 30)}`);
        expect(deep.positions).toEqual(want.slice(Math.max(0, want.length - 30)));
      }
    }
  });

  it("combines a verdict with meta and other metrics' conditions, and pages it by cursor", async () => {
    const want = matching("fail", false, (i) => i % 4 === 0 && verdictOf(latest.scored.get(i)) !== "none");
    const filter = q(`metric.${check.id}==fail;meta.k==a;metric.${scored.id}!=none`);
    const first = await gridPage(datasetId, `${filter}&limit=40`);
    expect(first.positions).toEqual(want.slice(0, 40));
    const next = await gridPage(datasetId, `${filter}&limit=40&cursor=${first.cursor}`);
    expect(next.positions).toEqual(want.slice(40, 80));
    // `none` with a meta condition, by offset and by cursor.
    const none = q(`metric.${check.id}==none;meta.k==b`);
    const noneWant = matching("none", false, (i) => i % 4 !== 0);
    const none1 = await gridPage(datasetId, `${none}&limit=30`);
    const none2 = await gridPage(datasetId, `${none}&limit=30&cursor=${none1.cursor}`);
    expect([...none1.positions, ...none2.positions]).toEqual(noneWant.slice(0, 60));
    expect((await gridPage(datasetId, `${none}&limit=30&offset=${noneWant.length - 20}`)).positions).toEqual(noneWant.slice(-20));
    const rare = await gridPage(datasetId, `${q(`metric.${check.id}==failed;metric.${scored.id}>=0.5`)}&limit=40`);
    expect(rare.positions).toEqual(matching("failed", false, (i) => (latest.scored.get(i)?.score ?? -1) >= 0.5).slice(0, 40));
  });

  it("sorts by a metric's latest score both ways, rows without one last in grid order, at any offset", async () => {
    const scoreOf = (i: number) => latest.scored.get(i)?.score ?? null;
    const order = (descending: boolean) => (a: number, b: number) => {
      const [x, y] = [scoreOf(a), scoreOf(b)];
      if (x === null || y === null) return (x === null ? 1 : 0) - (y === null ? 1 : 0) || a - b;
      return (descending ? y - x : x - y) || a - b;
    };
    const unscored = positions().filter((i) => scoreOf(i) === null).length;
    for (const descending of [false, true]) {
      const want = positions().sort(order(descending));
      for (const offset of [0, 1234, size - unscored - 20, size - unscored + 15, size - 10]) {
        const page = await gridPage(datasetId, `sort=${descending ? "-" : ""}metric.${scored.id}&limit=50&offset=${offset}`);
        expect(page.positions, `${descending ? "-" : ""} at ${offset}`).toEqual(want.slice(offset, offset + 50));
        expect(page.total).toBe(size);
      }
    }
    // With a filter: the sorted matches only.
    const want = positions()
      .filter((i) => i % 4 === 0)
      .sort(order(true));
    const page = await gridPage(datasetId, `sort=-metric.${scored.id}&${q("meta.k==a")}&limit=60&offset=${want.length - 70}`);
    expect(page.positions).toEqual(want.slice(want.length - 70, want.length - 10));
  });

  it("keeps the latest result through deletes and renumbering, and answers `none` from the counts once every row has a result", async () => {
    const d = (await createTestDataset("kept latest")).id;
    const at = await grow(d, 20);
    const metric = await createTestMetric(d, "conversation", "checkbox");
    const one = await createTestExecution(metric);
    const two = await createTestExecution(metric);
    await writeResults(one.id, metric.id, d, Array.from({ length: 20 }, (_, i) => [i, "completed", 1] as [number, "completed", number]));
    await writeResults(two.id, metric.id, d, [[3, "completed", 0], [4, "failed", null]]);
    const fails = async () => (await gridPage(d, `${q(`metric.${metric.id}==fail`)}&limit=50`)).positions;
    expect(await fails()).toEqual([3]);
    expect((await gridPage(d, `${q(`metric.${metric.id}==none`)}&limit=50`)).total).toBe(0);
    // The later run's results deleted: the earlier ones are latest again.
    await rawRun("delete from evaluation_results where execution_id = ?", [two.id]);
    expect(await fails()).toEqual([]);
    expect((await gridPage(d, `${q(`metric.${metric.id}==pass`)}&limit=50`)).total).toBe(20);
    // Every result of a conversation gone: it has none.
    await rawRun("delete from evaluation_results where conversation_id = ?", [at.get(5)!]);
    const none = await gridPage(d, `${q(`metric.${metric.id}==none`)}&limit=50`);
    expect([none.positions, none.total]).toEqual([[5], 1]);
    // Renumbered conversations (a generation's order) keep their verdicts, in the new grid order.
    await writeResults(two.id, metric.id, d, [[7, "completed", 0], [12, "completed", 0]]);
    await rawRun("update conversations set position = -1 - position where dataset_id = ?", [d]);
    await rawRun("update conversations set position = 19 + position + 1 where dataset_id = ?", [d]);
    // Position i is now 19 - i: 7 → 12 and 12 → 7, read in the new order.
    expect(await fails()).toEqual([7, 12]);
    const rows = (await call(grid.GET, "GET", `/api/datasets/${d}/grid?level=conversation&${q(`metric.${metric.id}==fail`)}&limit=50`, { params: { id: d } })).json as Array<{ entity_id: number }>;
    expect(rows.map((r) => r.entity_id)).toEqual([at.get(12), at.get(7)]);
    // A metric deleted takes its latest results and their counts with it.
    expect((await call(node.DELETE, "DELETE", `/api/evaluation-pipeline-nodes/${metric.id}`, { params: { id: metric.id } })).status).toBeLessThan(300);
    expect(await rawRows("select * from latest_results where pipeline_node_id = ?", [metric.id])).toEqual([]);
    expect(await rawRows("select * from latest_result_counts where pipeline_node_id = ?", [metric.id])).toEqual([]);
  });
});
