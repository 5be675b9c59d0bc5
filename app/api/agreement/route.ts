import { json, route } from "@/lib/api/route";
import { getAgreement } from "@/lib/labels/agreement-report";
import { agreementQuery } from "@/lib/schemas/labels";

export const GET = route({
  query: agreementQuery,
  handler: async ({ query }) => json(await getAgreement(query)),
});
