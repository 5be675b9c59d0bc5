import { json, route } from "@/lib/api/route";
import { previewReference } from "@/lib/references";
import { idParams } from "@/lib/schemas/common";
import { referencePreviewBody } from "@/lib/schemas/references";

/** A read: it changes nothing (a POST only to carry an unsaved reference), so viewers may call it — the review queue shows them the reference. */
export const POST = route({
  role: "viewer",
  params: idParams,
  body: referencePreviewBody,
  handler: async ({ params, body }) => json(await previewReference(params.id, body.reference)),
});
