import { json, route } from "@/lib/api/route";
import { getConversation } from "@/lib/datasets";
import { idParams } from "@/lib/schemas/common";

export const GET = route({
  params: idParams,
  handler: async ({ params }) => json(await getConversation(params.id)),
});
