import type { Metadata } from "next";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { ExecutionsHistory } from "@/components/executions/executions-history";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";
import { executionSchema } from "@/lib/schemas/executions";
import { loadForPage } from "@/lib/api/page-params";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Runs · ${(await load((await params).id)).name}` };
}

export default async function ExecutionsPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = await load((await params).id);
  const search = await searchParams;
  const status = executionSchema.shape.status.safeParse(search.status);
  const metric = idParam.safeParse(search.metric);
  return (
    <div className="space-y-6">
      <DatasetPageHeader dataset={dataset} title="Execution history">
        Every evaluation run of this dataset, newest first. Running rows update by themselves.
      </DatasetPageHeader>
      <ExecutionsHistory
        datasetId={dataset.id}
        metrics={await listMetrics(dataset.id)}
        initialStatus={status.success ? status.data : null}
        initialMetric={metric.success ? metric.data : null}
      />
    </div>
  );
}
