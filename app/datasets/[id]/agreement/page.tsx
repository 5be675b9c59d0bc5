import type { Metadata } from "next";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { AgreementView } from "@/components/trust/agreement-view";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";
import { loadForPage } from "@/lib/api/page-params";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Agreement · ${(await load((await params).id)).name}` };
}

export default async function AgreementPage({
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
      <DatasetPageHeader dataset={dataset} title="Judge agreement">
        How often two sources of verdicts agree on a metric, with 95% intervals; source B is taken as the truth.
      </DatasetPageHeader>
      <AgreementView datasetId={dataset.id} metrics={await listMetrics(dataset.id)} initialMetricId={metric.success ? metric.data : null} />
    </div>
  );
}
