import { json, route } from "@/lib/api/route";
import { listMetaFields } from "@/lib/references";
import { idParams } from "@/lib/schemas/common";

export const GET = route({
  params: idParams,
  handler: async ({ params }) => json(await listMetaFields(params.id)),
});
