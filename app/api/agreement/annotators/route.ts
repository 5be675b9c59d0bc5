import { json, route } from "@/lib/api/route";
import { getAnnotatorAgreement } from "@/lib/labels/annotators";
import { annotatorAgreementQuery } from "@/lib/schemas/labels";

/** Agreement between the people who labelled a metric's cells, pair by pair. */
export const GET = route({
  query: annotatorAgreementQuery,
  handler: async ({ query }) => json(await getAnnotatorAgreement(query)),
});
