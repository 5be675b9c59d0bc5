import { mappingPreviewResponse } from "@/lib/api/import-form";
import { route } from "@/lib/api/route";

export const dynamic = "force-dynamic";

/** Try a mapping on a file without importing it: the first conversation, the counts, the score and what it leaves out. */
export const POST = route({ handler: async ({ req, userId }) => await mappingPreviewResponse(req, userId) });
