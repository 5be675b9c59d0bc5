import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import type { Generation } from "@/lib/schemas/generations";

const tone = (s: Generation["status"]) => (s === "completed" ? "success" : s === "failed" ? "danger" : s === "cancelled" ? "warning" : "brand");

/** The generations made from a dataset, newest first, each one click from its page. */
export function GenerationsList({ datasetId, items, total }: { datasetId: number; items: Generation[]; total: number }) {
  if (items.length === 0) return null;
  return (
    <Card>
      <CardHeader title="Earlier generations" description={total > items.length ? `The ${items.length} newest of ${total}` : undefined} />
      <table className="w-full text-left text-sm" aria-label="Earlier generations">
        <thead className="text-xs uppercase text-slate-500">
          <tr>
            {["Generation", "Target", "Status", "Conversations", "Started"].map((h) => (
              <th key={h} className="px-5 py-2">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {items.map((g) => (
            <tr key={g.id} className="border-t border-slate-100">
              <td className="px-5 py-2">
                <Link href={`/datasets/${datasetId}/generate?generation=${g.id}`} className="text-brand-700 hover:underline">
                  {g.id} · {g.mode.replace("_", " ")}
                </Link>
              </td>
              <td className="px-5 py-2">{String((g.params.target as { name?: string } | undefined)?.name ?? g.target_id ?? "—")}</td>
              <td className="px-5 py-2">
                <Badge tone={tone(g.status)}>{g.status}</Badge>
              </td>
              <td className="px-5 py-2 tabular-nums">
                {g.completed + g.failed} of {g.total}
                {g.failed ? ` · ${g.failed} failed` : ""}
              </td>
              <td className="px-5 py-2 text-slate-500">{g.created_at.slice(0, 16).replace("T", " ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}
