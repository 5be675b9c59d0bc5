import { json, route } from "@/lib/api/route";
import { listSavedMappings, saveMapping } from "@/lib/import/saved-mappings";
import { createSavedMappingBody, MAX_SAVED_MAPPING_BYTES } from "@/lib/schemas/imports";

export const POST = route({
  body: createSavedMappingBody,
  // The import form caps its mapping field at 64 KB; a saved mapping is held to the same.
  maxBodyBytes: MAX_SAVED_MAPPING_BYTES,
  handler: async ({ body, userId }) => {
    const { mapping, created } = await saveMapping(body, userId);
    return json(mapping, { status: created ? 201 : 200 });
  },
});

export const GET = route({
  handler: async ({ userId }) => json(await listSavedMappings(userId)),
});
