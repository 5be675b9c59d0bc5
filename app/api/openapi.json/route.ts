import { buildOpenApiDocument } from "@/lib/api/openapi/build";
import { json, route } from "@/lib/api/route";
import { version } from "@/lib/version";

export const GET = route({
  handler: () => json(buildOpenApiDocument({ version })),
});
