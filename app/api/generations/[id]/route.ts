import { json, route } from "@/lib/api/route";
import { getGeneration } from "@/lib/generation";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

export const GET = route({ params: idParams, handler: async ({ params }) => json(await getGeneration(params.id)) });
