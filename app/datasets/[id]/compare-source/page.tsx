import type { Metadata } from "next";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { SourceComparisonView } from "@/components/generation/source-comparison";
import { loadForPage } from "@/lib/api/page-params";
import { getDataset, listConversations } from "@/lib/datasets";
import { compareBySource } from "@/lib/labels/compare-across";
import { getExecution } from "@/lib/results/execution-history";
import { idParam } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Compared with its source · ${(await load((await params).id)).name}` };
}

/** A generated dataset's run against its source's run (`?a=<source run>&b=<generated run>`), paired by source conversation. */
export default async function CompareSourcePage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const dataset = await load((await params).id);
  const search = await searchParams;
  const a = idParam.safeParse(search.a);
  const b = idParam.safeParse(search.b);
  if (!a.success || !b.success) {
    return (
      <DatasetPageHeader dataset={dataset} title="Compared with its source">
        Name a run of the source dataset (a) and a run of this generated dataset (b) in the address: ?a=&lt;id&gt;&amp;b=&lt;id&gt;.
      </DatasetPageHeader>
    );
  }
  const [ea, data] = await Promise.all([getExecution(a.data), compareBySource({ a: a.data, b: b.data })]);
  const { items } = await listConversations(ea.dataset_id, { limit: 500, offset: 0 });
  const names = Object.fromEntries(items.map((c) => [c.id, c.label]));
  return (
    <div className="space-y-5">
      <DatasetPageHeader dataset={dataset} title="Compared with its source">
        Each generated conversation paired with the source conversation it came from: flips, score deltas, pass^k and pass@k over repeats.
      </DatasetPageHeader>
      <SourceComparisonView data={data} sourceDatasetId={ea.dataset_id} generatedDatasetId={dataset.id} names={names} />
    </div>
  );
}
