import type { Metadata } from "next";
import { DatasetPageHeader } from "@/components/datasets/dataset-page-header";
import { GenerateForm } from "@/components/generation/generate-form";
import { GenerationLive } from "@/components/generation/generation-live";
import { GenerationsList } from "@/components/generation/generations-list";
import { pageCaller } from "@/lib/api/page-caller";
import { loadForPage } from "@/lib/api/page-params";
import { getDataset, listConversations } from "@/lib/datasets";
import { getGeneration, listGenerations } from "@/lib/generation";
import { listMetrics } from "@/lib/metrics";
import { idParam } from "@/lib/schemas/common";
import { listTargets } from "@/lib/targets";

export const dynamic = "force-dynamic";

const load = async (rawId: string) => await loadForPage(rawId, getDataset);

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Generate · ${(await load((await params).id)).name}` };
}

/** The source conversations' names, for the live list (the first 500; later ones are named by id). */
async function namesOf(datasetId: number): Promise<Record<number, string>> {
  const { items } = await listConversations(datasetId, { limit: 500, offset: 0 });
  return Object.fromEntries(items.map((c) => [c.id, c.label]));
}

/** Generate conversations from this dataset against a target (`?generation=<id>` follows one of its generations). */
export default async function GeneratePage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const dataset = await load((await params).id);
  const chosen = idParam.safeParse((await searchParams).generation);
  const generation = chosen.success ? await getGeneration(chosen.data).catch(() => null) : null;
  const ours = generation && generation.source_dataset_id === dataset.id ? generation : null;
  return (
    <div className="space-y-5">
      <DatasetPageHeader dataset={dataset} title="Replay and simulate">
        Test the agent you are about to ship against these conversations: replay them, answer their next turns again, or let a model play each user.
      </DatasetPageHeader>
      {ours ? (
        <GenerationLive initial={ours} sourceMetrics={await listMetrics(dataset.id)} sourceNames={await namesOf(dataset.id)} />
      ) : (
        <>
          <GenerateForm datasetId={dataset.id} targets={await listTargets(await pageCaller())} />
          <GenerationsList datasetId={dataset.id} {...await listGenerations({ sourceDatasetId: dataset.id, limit: 20, offset: 0 })} />
        </>
      )}
    </div>
  );
}
