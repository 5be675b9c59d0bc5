import type { Metadata } from "next";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { ReviewQueue } from "@/components/trust/review-queue";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";
import { loadForPage } from "@/lib/api/page-params";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Review · ${(await load((await params).id)).name}` };
}

export default async function ReviewPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = await load((await params).id);
  const metric = idParam.safeParse((await searchParams).metric);
  return (
    <div className="space-y-5">
      <DatasetPageHeader dataset={dataset} title="Review queue">
        Label the judge&apos;s verdicts one cell after another. Press ? for the keys.
      </DatasetPageHeader>
      <ReviewQueue datasetId={dataset.id} metrics={await listMetrics(dataset.id)} initialMetricId={metric.success ? metric.data : null} />
    </div>
  );
}
