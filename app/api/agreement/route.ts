import { json, route } from "@/lib/api/route";
import { getAgreement } from "@/lib/labels/agreement";
import { agreementQuery } from "@/lib/schemas/labels";

export const GET = route({
  query: agreementQuery,
  handler: ({ query }) => json(getAgreement(query)),
});
