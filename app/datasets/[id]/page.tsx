import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { MetricsList } from "@/components/metrics/metrics-list";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import { AppError } from "@/lib/api/errors";
import { getDataset, listConversations } from "@/lib/datasets";
import { listMetrics } from "@/lib/metrics/metrics";
import { idParam } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

async function load(params: Promise<{ id: string }>) {
  const parsed = idParam.safeParse((await params).id);
  if (!parsed.success) notFound();
  try {
    return { dataset: getDataset(parsed.data), conversations: listConversations(parsed.data, { limit: 100, offset: 0 }) };
  } catch (e) {
    if (e instanceof AppError && e.status === 404) notFound();
    throw e;
  }
}

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const { dataset } = await load(params);
  return { title: dataset.name };
}

export default async function DatasetPage({ params }: { params: Promise<{ id: string }> }) {
  const { dataset, conversations } = await load(params);
  return (
    <div className="space-y-6">
      <div>
        <Link href="/" className="text-sm text-slate-500 hover:text-slate-800">
          ← Datasets
        </Link>
        <h1 className="mt-1 text-2xl font-semibold tracking-tight">{dataset.name}</h1>
        {dataset.description ? <p className="mt-1 text-sm text-slate-500">{dataset.description}</p> : null}
        <div className="mt-3 flex flex-wrap items-center gap-2">
          <Badge>{dataset.conversation_count} conversations</Badge>
          <Badge>{dataset.message_count} messages</Badge>
          <Badge>{dataset.step_count} steps</Badge>
          <Link href={`/import?dataset_id=${dataset.id}`} className="ml-2 text-sm font-medium text-brand-700 hover:underline">
            Import conversations
          </Link>
        </div>
      </div>
      <MetricsList datasetId={dataset.id} initial={listMetrics(dataset.id)} />
      <Card>
        <CardHeader title="Conversations" description={`${conversations.total} in import order`} />
        {conversations.items.length === 0 ? (
          <p className="px-5 py-10 text-center text-sm text-slate-500">No conversations imported yet.</p>
        ) : (
          <Table aria-label="Conversations">
            <thead>
              <tr>
                <Th className="w-16">#</Th>
                <Th>Name</Th>
                <Th className="text-right">Messages</Th>
                <Th className="text-right">Steps</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {conversations.items.map((c) => (
                <tr key={c.id}>
                  <Td className="tabular-nums text-slate-500">{c.position + 1}</Td>
                  <Td>
                    <span className="font-medium">{c.name ?? `Conversation ${c.position + 1}`}</span>
                    {c.description ? <p className="text-xs text-slate-500">{c.description}</p> : null}
                  </Td>
                  <Td className="text-right tabular-nums">{c.message_count}</Td>
                  <Td className="text-right tabular-nums">{c.step_count}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </div>
  );
}
