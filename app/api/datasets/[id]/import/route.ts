import { route } from "@/lib/api/route";
import { importIntoDatasetResponse } from "@/lib/api/import-form";
import { idParams } from "@/lib/schemas/common";

// Large uploads are parsed and inserted in process; never cache or prerender this route.
export const dynamic = "force-dynamic";

export const POST = route({
  params: idParams,
  handler: async ({ params, req, userId }) => await importIntoDatasetResponse(req, params.id, userId),
});
