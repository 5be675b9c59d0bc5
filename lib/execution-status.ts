/**
 * Whether an execution is still going or has ended, in one place for the server (runner, streams) and
 * the pages. Kept free of imports so client components can use it without pulling in the store.
 */
export const activeStatuses = ["pending", "processing"] as const;
export type ActiveStatus = (typeof activeStatuses)[number];
export type FinalStatus = "completed" | "failed" | "cancelled";

/** Pending or processing: cells may still be evaluated, cancel applies. */
export function isActiveStatus(status: string): status is ActiveStatus {
  return status === "pending" || status === "processing";
}

/** Completed, failed or cancelled: nothing more will change. */
export function isFinalStatus(status: string): status is FinalStatus {
  return status === "completed" || status === "failed" || status === "cancelled";
}
