import type { RunRequest } from "@/lib/schemas/executions";

/**
 * A run's batch size as every part of it uses it: its judge calls in flight at most (@GOAL calls and
 * hedges included), on either engine — `batch_size` in async mode, 1 in sync mode, where cells go one
 * after another. The run's meta shows this figure.
 */
export function batchSizeOf(req: Pick<RunRequest, "execution_mode" | "batch_size">): number {
  return req.execution_mode === "async" ? req.batch_size : 1;
}
