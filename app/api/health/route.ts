import { authenticate, json, route } from "@/lib/api/route";
import { authRequired } from "@/lib/auth";
import { checkHealth } from "@/lib/health";

export const dynamic = "force-dynamic";

/** Reachable without a credential (a load balancer's probe); the judge's settings only with one. */
export const GET = route({
  public: true,
  handler: async ({ req }) => {
    const withJudge = !(await authRequired()) || (await authenticate(req).then(() => true, () => false));
    const health = await checkHealth(withJudge);
    return json(health, { status: health.database === "ok" ? 200 : 503 });
  },
});
