import type { Metadata } from "next";
import { StartComparison } from "@/components/comparisons/start-comparison";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { loadForPage } from "@/lib/api/page-params";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Compare replies · ${(await load((await params).id)).name}` };
}

/** `?metric=<id>` preselects the pairwise metric (the grid's column menu links here). */
export default async function PairwisePage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = await load((await params).id);
  const metric = idParam.safeParse((await searchParams).metric);
  const metrics = (await listMetrics(dataset.id)).filter((m) => m.output_type === "pairwise");
  return (
    <div className="space-y-5">
      <DatasetPageHeader dataset={dataset} title="Compare replies">
        A pairwise metric judges two replies to the same input, in both orders: a verdict that flips with the order is a tie.
      </DatasetPageHeader>
      <StartComparison datasetId={dataset.id} metrics={metrics} initialMetricId={metric.success && metrics.some((m) => m.id === metric.data) ? metric.data : null} />
    </div>
  );
}
