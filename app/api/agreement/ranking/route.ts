import { json, route } from "@/lib/api/route";
import { getRankingAgreement } from "@/lib/labels/ranking";
import { rankingQuery } from "@/lib/schemas/labels";

/** A message metric against human ranks among sibling replies: pairwise accuracy and mean Spearman. */
export const GET = route({
  query: rankingQuery,
  handler: async ({ query }) => json(await getRankingAgreement(query)),
});
