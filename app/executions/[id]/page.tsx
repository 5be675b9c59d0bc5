import type { Metadata } from "next";
import { ExecutionView } from "@/components/executions/execution-view";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { getExecution } from "@/lib/results/execution-history";
import { loadForPage } from "@/lib/api/page-params";

export const dynamic = "force-dynamic";

const load = async (rawId: string) =>
  await loadForPage(rawId, async (id) => {
    const execution = await getExecution(id);
    return { execution, dataset: await getDataset(execution.dataset_id) };
  });

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Run #${(await load((await params).id)).execution.id}` };
}

export default async function ExecutionPage({ params }: { params: Promise<{ id: string }> }) {
  const { execution, dataset } = await load((await params).id);
  return <ExecutionView initial={execution} metrics={await listMetrics(dataset.id)} datasetName={dataset.name} />;
}
