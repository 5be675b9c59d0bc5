import { route } from "@/lib/api/route";
import { createAndImportResponse } from "@/lib/api/import-form";

export const dynamic = "force-dynamic";

export const POST = route({
  handler: async ({ req, userId }) => await createAndImportResponse(req, userId),
});
