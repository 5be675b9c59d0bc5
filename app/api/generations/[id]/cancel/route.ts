import { json, route } from "@/lib/api/route";
import { cancelGeneration } from "@/lib/generation";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

export const POST = route({ params: idParams, handler: async ({ params }) => json(await cancelGeneration(params.id)) });
