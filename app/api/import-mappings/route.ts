import { json, route } from "@/lib/api/route";
import { listSavedMappings, saveMapping } from "@/lib/import/saved-mappings";
import { createSavedMappingBody } from "@/lib/schemas/imports";

export const POST = route({
  body: createSavedMappingBody,
  handler: ({ body, userId }) => {
    const { mapping, created } = saveMapping(body, userId);
    return json(mapping, { status: created ? 201 : 200 });
  },
});

export const GET = route({
  handler: ({ userId }) => json(listSavedMappings(userId)),
});
