import type { Metadata } from "next";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { LiveView } from "@/components/live/live-view";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { loadForPage } from "@/lib/api/page-params";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Live · ${(await load((await params).id)).name}` };
}

export default async function LivePage({ params }: { params: Promise<{ id: string }> }) {
  const dataset = await load((await params).id);
  const metrics = (await listMetrics(dataset.id)).map((m) => ({ id: m.id, name: m.name, evaluation_level: m.evaluation_level }));
  return (
    <div className="space-y-6">
      <DatasetPageHeader dataset={dataset} title="Live">
        Conversations arriving as OpenTelemetry traces, judged by the online rules as they finish. Updates by itself.
      </DatasetPageHeader>
      <LiveView datasetId={dataset.id} metrics={metrics} />
    </div>
  );
}
