import { json, route } from "@/lib/api/route";
import { checkHealth } from "@/lib/health";

export const dynamic = "force-dynamic";

export const GET = route({
  handler: async () => {
    const health = await checkHealth();
    return json(health, { status: health.database === "ok" ? 200 : 503 });
  },
});
