import { noContent, route } from "@/lib/api/route";
import { deleteLabel } from "@/lib/labels";
import { idParams } from "@/lib/schemas/common";

export const DELETE = route({
  params: idParams,
  handler: async ({ params, userId }) => {
    await deleteLabel(params.id, userId);
    return noContent();
  },
});
