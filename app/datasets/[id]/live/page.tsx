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
      <p className="text-sm text-slate-600" data-testid="live-trace-hint">
        Traces land in this dataset when the exporter sends them to <span className="font-mono">/api/otel/v1/traces</span> with the resource
        attribute <span className="font-mono">turnscope.dataset={dataset.name}</span> (else its <span className="font-mono">service.name</span> names the
        dataset), e.g. <span className="font-mono">OTEL_RESOURCE_ATTRIBUTES=turnscope.dataset={encodeURIComponent(dataset.name)}</span>.
      </p>
      <LiveView datasetId={dataset.id} metrics={metrics} />
    </div>
  );
}
