import { route } from "@/lib/api/route";
import { createAndImportResponse } from "@/lib/api/import-form";

export const dynamic = "force-dynamic";

export const POST = route({
  handler: async ({ req, userId, caller }) => await createAndImportResponse(req, userId, caller.via === "open"),
});
