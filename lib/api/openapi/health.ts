import { healthSchema } from "@/lib/schemas/health";
import type { Operation } from "./types";

export const healthOperations: Operation[] = [
  {
    method: "get",
    path: "/health",
    operationId: "getHealth",
    summary: "Is the service up: database reachable, judge configured, version",
    description: "Needs no credential, so a load balancer's probe can use it. Without one on a locked server the answer leaves out `judge`.",
    tag: "Operations",
    public: true,
    responses: {
      200: { description: "Healthy", schema: healthSchema },
      503: { description: "The database is unreachable", schema: healthSchema },
    },
  },
];
