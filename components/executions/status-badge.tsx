import { Badge } from "@/components/ui/badge";
import type { Execution } from "@/lib/schemas/executions";

const tones = {
  pending: "neutral",
  processing: "brand",
  completed: "success",
  failed: "danger",
  cancelled: "warning",
} as const;

/** An execution's status as on the wire (lower case), coloured by outcome. */
export function ExecutionStatusBadge({ status }: { status: Execution["status"] }) {
  return (
    <span data-testid="execution-status">
      <Badge tone={tones[status]}>{status}</Badge>
    </span>
  );
}
