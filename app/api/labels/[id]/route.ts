import { noContent, route } from "@/lib/api/route";
import { deleteLabel } from "@/lib/labels";
import { idParams } from "@/lib/schemas/common";

export const DELETE = route({
  params: idParams,
  handler: ({ params, userId }) => {
    deleteLabel(params.id, userId);
    return noContent();
  },
});
