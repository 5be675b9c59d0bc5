import type { Metadata } from "next";
import Link from "next/link";
import { Workspace } from "@/components/grid/workspace";
import { GRID_PAGE_SIZE } from "@/components/grid/types";
import { viewFromSearch } from "@/components/grid/grid-view";
import { MetricsList } from "@/components/metrics/metrics-list";
import { Badge } from "@/components/ui/badge";
import { getDataset } from "@/lib/datasets";
import { judgeSettings } from "@/lib/judge";
import { listMetrics } from "@/lib/metrics";
import { getGridPage } from "@/lib/results/grid";
import { loadForPage } from "@/lib/api/page-params";
import { idParam } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: (await load((await params).id)).name };
}

/** `?open=<type>:<id>&conversation=<id>` (links from the agreement page) opens that cell's conversation. */
function readOpen(search: Record<string, string | string[] | undefined>) {
  const open = typeof search.open === "string" ? /^(conversation|message|step):(\d+)$/.exec(search.open) : null;
  const conversation = idParam.safeParse(search.conversation);
  if (!open || !conversation.success) return null;
  return { entityType: open[1], entityId: Number(open[2]), conversationId: conversation.data };
}

export default async function DatasetPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = await load((await params).id);
  const search = await searchParams;
  const initialOpen = readOpen(search);
  // The first page of rows comes with the HTML, so the grid shows at once; the rest page in as it scrolls.
  const grid = await getGridPage(dataset.id, { level: "conversation", limit: GRID_PAGE_SIZE, offset: 0 });
  const metrics = await listMetrics(dataset.id);
  return (
    <div className="space-y-5">
      <div>
        <Link href="/" className="text-sm text-slate-500 hover:text-slate-800">
          ← Datasets
        </Link>
        <div className="mt-1 flex flex-wrap items-baseline gap-x-4 gap-y-1">
          <h1 className="text-2xl font-semibold tracking-tight">{dataset.name}</h1>
          <div className="flex flex-wrap items-center gap-2">
            <Badge>{dataset.conversation_count.toLocaleString()} conversations</Badge>
            <Badge>{dataset.message_count.toLocaleString()} messages</Badge>
            <Badge>{dataset.step_count.toLocaleString()} steps</Badge>
            <Link href={`/import?dataset_id=${dataset.id}`} className="ml-2 text-sm font-medium text-brand-700 hover:underline">
              Import conversations
            </Link>
            <Link href={`/datasets/${dataset.id}/executions`} className="ml-2 text-sm font-medium text-brand-700 hover:underline">
              Execution history
            </Link>
            <Link href={`/datasets/${dataset.id}/review`} className="ml-2 text-sm font-medium text-brand-700 hover:underline">
              Review queue
            </Link>
            <Link href={`/datasets/${dataset.id}/agreement`} className="ml-2 text-sm font-medium text-brand-700 hover:underline">
              Agreement
            </Link>
            <Link href={`/datasets/${dataset.id}/compare`} className="ml-2 text-sm font-medium text-brand-700 hover:underline">
              Compare runs
            </Link>
            <Link href={`/datasets/${dataset.id}/generate`} className="ml-2 text-sm font-medium text-brand-700 hover:underline">
              Generate…
            </Link>
            <Link href={`/datasets/${dataset.id}/pairwise`} className="ml-2 text-sm font-medium text-brand-700 hover:underline">
              Compare replies
            </Link>
          </div>
        </div>
        {dataset.description ? <p className="mt-1 text-sm text-slate-500">{dataset.description}</p> : null}
      </div>
      <Workspace datasetId={dataset.id} initialMetrics={metrics} initialGrid={grid} defaultModel={judgeSettings().default_model} initialOpen={initialOpen} initialView={viewFromSearch(search)} />
      <MetricsList datasetId={dataset.id} initial={metrics} />
    </div>
  );
}
