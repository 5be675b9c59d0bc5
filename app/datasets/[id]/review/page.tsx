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
  const query = await searchParams;
  const metric = idParam.safeParse(query.metric);
  // `cell=message:12` opens the queue on that cell (a link from the grid's cell detail).
  const cell = typeof query.cell === "string" && /^(conversation|message|step):\d{1,16}$/.test(query.cell) ? query.cell : null;
  return (
    <div className="space-y-5">
      <DatasetPageHeader dataset={dataset} title="Review queue">
        Label the judge&apos;s verdicts one cell after another. Press ? for the keys.
      </DatasetPageHeader>
      <ReviewQueue datasetId={dataset.id} metrics={await listMetrics(dataset.id)} initialMetricId={metric.success ? metric.data : null} initialCell={cell} />
    </div>
  );
}
