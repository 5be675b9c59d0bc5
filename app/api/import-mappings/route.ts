import { json, route } from "@/lib/api/route";
import { listSavedMappings, saveMapping } from "@/lib/import/saved-mappings";
import { createSavedMappingBody } from "@/lib/schemas/imports";

export const POST = route({
  body: createSavedMappingBody,
  handler: async ({ body, userId }) => {
    const { mapping, created } = await saveMapping(body, userId);
    return json(mapping, { status: created ? 201 : 200 });
  },
});

export const GET = route({
  handler: async ({ userId }) => json(await listSavedMappings(userId)),
});
