import { json, route } from "@/lib/api/route";
import { liveDataset } from "@/lib/online";
import { idParams } from "@/lib/schemas/common";
import { liveQuery } from "@/lib/schemas/online";

export const dynamic = "force-dynamic";

/** The Live page's data: live conversations arriving, each metric's score over time, the rules and their last failures. */
export const GET = route({
  params: idParams,
  query: liveQuery,
  handler: async ({ params, query }) => json(await liveDataset(params.id, query)),
});
