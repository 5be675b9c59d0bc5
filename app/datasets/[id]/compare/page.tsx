import type { Metadata } from "next";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { CompareView } from "@/components/trust/compare-view";
import { getDataset } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";
import { loadForPage } from "@/lib/api/page-params";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Compare · ${(await load((await params).id)).name}` };
}

export default async function ComparePage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const dataset = await load((await params).id);
  const search = await searchParams;
  const a = idParam.safeParse(search.a);
  const b = idParam.safeParse(search.b);
  return (
    <div className="space-y-5">
      <DatasetPageHeader dataset={dataset} title="Compare two runs">
        Two executions side by side: what changed between them, flips, score deltas, tokens and cost.
      </DatasetPageHeader>
      <CompareView datasetId={dataset.id} metrics={await listMetrics(dataset.id)} initialA={a.success ? a.data : null} initialB={b.success ? b.data : null} initialOnlyFlips={search.flips === "1"} />
    </div>
  );
}
