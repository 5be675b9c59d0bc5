import { json, route } from "@/lib/api/route";
import { promoteAlignment } from "@/lib/align";
import { promoteAlignmentBody } from "@/lib/schemas/alignments";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

/** Save a candidate as the metric's next prompt version (409 unless it beat the baseline on held-out cells, or `force`). */
export const POST = route({ params: idParams, body: promoteAlignmentBody, handler: async ({ params, body }) => json(await promoteAlignment(params.id, body)) });
