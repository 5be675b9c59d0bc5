/** What a run stopped by its max_cost_usd says in its errors (both ways a run is executed). */
export function budgetMessage(spentUsd: number, limitUsd: number): string {
  return `budget reached: $${spentUsd.toFixed(4)} spent of max_cost_usd $${limitUsd}; the cells not evaluated are left for a retry`;
}
