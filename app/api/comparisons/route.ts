import { json, route } from "@/lib/api/route";
import { startComparison } from "@/lib/comparisons";
import { createComparisonBody } from "@/lib/schemas/comparisons";

export const dynamic = "force-dynamic";

/** Judge two sides' replies against each other with a pairwise metric, each pair in both orders: 202 at once. */
export const POST = route({
  body: createComparisonBody,
  handler: async ({ body, userId }) => {
    const comparison = await startComparison(body, userId);
    return json(comparison, { status: 202, headers: { location: `/api/comparisons/${comparison.id}` } });
  },
});
