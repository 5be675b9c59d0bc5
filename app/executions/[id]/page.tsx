import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { ExecutionView } from "@/components/executions/execution-view";
import { AppError } from "@/lib/api/errors";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { getExecution } from "@/lib/runner";
import { idParam } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

function load(rawId: string) {
  const parsed = idParam.safeParse(rawId);
  if (!parsed.success) notFound();
  try {
    const execution = getExecution(parsed.data);
    return { execution, dataset: getDataset(execution.dataset_id) };
  } catch (e) {
    if (e instanceof AppError && e.status === 404) notFound();
    throw e;
  }
}

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Run #${load((await params).id).execution.id}` };
}

export default async function ExecutionPage({ params }: { params: Promise<{ id: string }> }) {
  const { execution, dataset } = load((await params).id);
  return <ExecutionView initial={execution} metrics={listMetrics(dataset.id)} datasetName={dataset.name} />;
}
