/**
 * lib/jobs: the one room for background work. A kind (comparisons, alignments, …) registers once with
 * how its rows are leased and ended (kind.ts) and gets leases and their renewal (lease.ts), the sweep, the
 * start-up recovery, cancel from any process, progress events (events.ts) and a budget meter (meter.ts).
 * Work any process may take up from a shared queue registers a claim queue (claims.ts) instead: claimed
 * rows, one heartbeat renewing their leases, lost and cancelled claims stopped, wake-ups and drain — the
 * generations, and a queued run's cell batches (cell-queue.ts, on pg-boss's table). The shared judge slots
 * of queued runs (semaphore.ts) and the worker process's body (worker.ts) live here too, and periodic passes
 * (periodic.ts: the lease sweeps, the online rules' sweep, the trace store's retention).
 */
export { defineClaimQueue, type ClaimContext, type ClaimKey, type ClaimQueue, type ClaimQueueSpec, type ClaimStop, type ClaimStore } from "./claims";
export { defineJobKind, stopAllJobs, type JobContext, type JobKind, type JobStore } from "./kind";
export { holdLease, leaseMs, leaseUntil, startLeaseSweep, stopAllLeases, stopLease } from "./lease";
export { definePeriodic, type Periodic } from "./periodic";
export { LocalBudgetMeter, SharedBudgetMeter, type BudgetMeter, type LandedPool } from "./meter";
