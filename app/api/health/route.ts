import { json, route } from "@/lib/api/route";
import { checkHealth } from "@/lib/health";

export const dynamic = "force-dynamic";

export const GET = route({
  handler: () => {
    const health = checkHealth();
    return json(health, { status: health.database === "ok" ? 200 : 503 });
  },
});
