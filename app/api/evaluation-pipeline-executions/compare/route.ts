import { json, route } from "@/lib/api/route";
import { compareExecutions } from "@/lib/labels/compare";
import { compareQuery } from "@/lib/schemas/compare";

export const GET = route({
  query: compareQuery,
  handler: async ({ query }) => json(await compareExecutions(query)),
});
