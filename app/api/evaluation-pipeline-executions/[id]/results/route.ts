import { route } from "@/lib/api/route";
import { executionResultsStream } from "@/lib/results/export";
import { executionResultsPage } from "@/lib/results/json";
import { openSnapshot } from "@/lib/results/read";
import { idParams } from "@/lib/schemas/common";
import { resultsQuery } from "@/lib/schemas/executions";

// Streamed when whole: an execution can hold 100,000 results, read and written page by page.
export const GET = route({
  params: idParams,
  query: resultsQuery,
  handler: async ({ params, query }) => {
    const headers = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };
    if (query.limit === undefined) return new Response(await executionResultsStream(params.id), { headers });
    const { body, total } = await executionResultsPage(await openSnapshot(params.id), query.limit, query.offset ?? 0);
    return new Response(body, { headers: { ...headers, "x-total-count": String(total) } });
  },
});
