import { json, route } from "@/lib/api/route";
import { compareExecutions } from "@/lib/labels/compare";
import { compareBySource } from "@/lib/labels/compare-across";
import { compareQuery } from "@/lib/schemas/compare";

export const GET = route({
  query: compareQuery,
  handler: async ({ query }) => json(query.pair_by === "source" ? await compareBySource(query) : await compareExecutions(query)),
});
