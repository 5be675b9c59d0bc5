import { json, route } from "@/lib/api/route";
import { previewReference } from "@/lib/references";
import { idParams } from "@/lib/schemas/common";
import { referencePreviewBody } from "@/lib/schemas/references";

export const POST = route({
  params: idParams,
  body: referencePreviewBody,
  handler: async ({ params, body }) => json(await previewReference(params.id, body.reference)),
});
