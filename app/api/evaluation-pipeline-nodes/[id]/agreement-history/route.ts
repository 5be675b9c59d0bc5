import { json, route } from "@/lib/api/route";
import { getAgreementHistory } from "@/lib/labels/agreement-history";
import { agreementHistoryQuery } from "@/lib/schemas/alignments";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

/** The metric's agreement with the truth per prompt version (version → κ with its interval). */
export const GET = route({ params: idParams, query: agreementHistoryQuery, handler: async ({ params, query }) => json(await getAgreementHistory(params.id, query.truth)) });
