import { route } from "@/lib/api/route";
import { executionResultsStream } from "@/lib/results/export";
import { idParams } from "@/lib/schemas/common";

// Streamed: an execution can hold 100,000 results, which are read and written page by page.
export const GET = route({
  params: idParams,
  handler: ({ params }) =>
    new Response(executionResultsStream(params.id), {
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    }),
});
