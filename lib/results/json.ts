/**
 * The two JSON documents over all of an execution's results, written page by page so that neither the
 * rows nor the serialised text of 100,000 results is ever held at once.
 */
import "server-only";
import { listResultPage } from "@/db/repositories/evaluation-results";
import { toExecution, toResult } from "./serialize";
import { aggregateSnapshot, feed, finishAggregates, newAggregators, resultPages, type ExecutionSnapshot } from "./read";

/** `GET /executions/{id}/results`: `{execution_id, results, aggregated, errors}`, aggregated in the same pass. */
export async function* executionResultsJson(snapshot: ExecutionSnapshot): AsyncGenerator<string> {
  const aggregators = newAggregators(snapshot);
  yield `{"execution_id":${snapshot.execution.id},"results":[`;
  let separator = "";
  for await (const page of resultPages(snapshot)) {
    const parts = page.map((row) => {
      feed(aggregators, row);
      return JSON.stringify(toResult(row));
    });
    yield separator + parts.join(",");
    separator = ",";
  }
  const { errors } = toExecution(snapshot.execution);
  yield `],"aggregated":${JSON.stringify(finishAggregates(aggregators))},"errors":${JSON.stringify(errors)}}`;
}

/** One page of `GET /executions/{id}/results` (`limit`/`offset`), with aggregates over all results. */
export async function executionResultsPage(snapshot: ExecutionSnapshot, limit: number, offset: number): Promise<{ body: string; total: number }> {
  const rows = await listResultPage(snapshot.execution.id, snapshot.uptoId, limit, offset);
  const total = snapshot.count;
  const { errors } = toExecution(snapshot.execution);
  const body = `{"execution_id":${snapshot.execution.id},"results":[${rows.map((r) => JSON.stringify(toResult(r))).join(",")}],"aggregated":${JSON.stringify(await aggregateSnapshot(snapshot))},"errors":${JSON.stringify(errors)}}`;
  return { body, total };
}

/** The JSON export: `{execution, metrics, aggregated, results}`; aggregates come first, from a light pass. */
export async function* exportJson(snapshot: ExecutionSnapshot): AsyncGenerator<string> {
  const metrics = snapshot.metrics.map((m) => ({ id: m.nodeId, name: m.name, output_type: m.outputType }));
  yield `{"execution":${JSON.stringify(toExecution(snapshot.execution))},"metrics":${JSON.stringify(metrics)}`;
  yield `,"aggregated":${JSON.stringify(await aggregateSnapshot(snapshot))},"results":[`;
  let separator = "";
  for await (const page of resultPages(snapshot)) {
    yield separator + page.map((row) => JSON.stringify(toResult(row))).join(",");
    separator = ",";
  }
  yield "]}";
}
