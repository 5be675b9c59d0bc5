import type { Metadata } from "next";
import { ComparisonView } from "@/components/comparisons/comparison-view";
import { loadForPage } from "@/lib/api/page-params";
import { getComparison } from "@/lib/comparisons";
import { getDataset, listConversations } from "@/lib/datasets";
import { getMetric } from "@/lib/metrics";

export const dynamic = "force-dynamic";

/** Pairs shown on the page; the API returns them all. */
const SHOWN = 200;

const load = async (rawId: string) =>
  await loadForPage(rawId, async (id) => {
    const comparison = await getComparison(id);
    const shown = comparison.results.slice(0, SHOWN);
    const names = async (datasetId: number | null, ids: number[]) =>
      datasetId === null || ids.length === 0 ? [] : (await listConversations(datasetId, { limit: ids.length, offset: 0, ids: [...new Set(ids)] })).items;
    const [metric, a, b, aNames, bNames] = await Promise.all([
      getMetric(comparison.pipeline_node_id),
      getDataset(comparison.a_dataset_id),
      comparison.b_dataset_id === null ? null : getDataset(comparison.b_dataset_id),
      names(comparison.a_dataset_id, shown.map((r) => r.a.conversation_id)),
      names(comparison.b_dataset_id ?? comparison.a_dataset_id, shown.map((r) => r.b.conversation_id)),
    ]);
    const labels = Object.fromEntries([...aNames, ...bNames].map((c) => [c.id, c.label]));
    return { comparison, metricName: metric.name, metricDatasetId: metric.dataset_id, a: { id: a.id, name: a.name }, b: b && { id: b.id, name: b.name }, labels, shown: SHOWN };
  });

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Comparison #${(await load((await params).id)).comparison.id}` };
}

export default async function ComparisonPage({ params }: { params: Promise<{ id: string }> }) {
  return <ComparisonView {...await load((await params).id)} />;
}
