import { noContent, route } from "@/lib/api/route";
import { deleteSavedMapping } from "@/lib/import/saved-mappings";
import { idParams } from "@/lib/schemas/common";

export const DELETE = route({
  params: idParams,
  handler: async ({ params, userId }) => {
    await deleteSavedMapping(params.id, userId);
    return noContent();
  },
});
