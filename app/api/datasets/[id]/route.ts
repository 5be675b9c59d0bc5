import { json, noContent, route } from "@/lib/api/route";
import { getDataset, updateDataset } from "@/lib/datasets";
import { deleteDatasetStoppingRuns } from "@/lib/runner";
import { idParams } from "@/lib/schemas/common";
import { updateDatasetBody } from "@/lib/schemas/datasets";

export const GET = route({
  params: idParams,
  handler: async ({ params }) => json(await getDataset(params.id)),
});

export const PATCH = route({
  params: idParams,
  body: updateDatasetBody,
  handler: async ({ params, body }) => json(await updateDataset(params.id, body)),
});

export const DELETE = route({
  params: idParams,
  handler: async ({ params }) => {
    await deleteDatasetStoppingRuns(params.id);
    return noContent();
  },
});
