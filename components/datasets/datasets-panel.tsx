"use client";

import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Field, Input, Textarea } from "@/components/ui/field";
import { Table, Td, Th } from "@/components/ui/table";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Dataset } from "@/lib/schemas/datasets";
import { Pager } from "@/components/ui/pager";

const PAGE_SIZE = 50;

function formatDate(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** The dataset list with paging, and the form that creates one. */
export function DatasetsPanel({ initial }: { initial: { items: Dataset[]; total: number } }) {
  const [offset, setOffset] = useState(0);
  const query = useQuery({
    queryKey: ["datasets", offset],
    queryFn: async () => {
      const { data, total } = await apiFetch<Dataset[]>(`/datasets?limit=${PAGE_SIZE}&offset=${offset}`);
      return { items: data, total: total ?? data.length };
    },
    initialData: offset === 0 ? initial : undefined,
    placeholderData: keepPreviousData,
  });
  const { items, total } = query.data ?? { items: [], total: 0 };

  return (
    <div className="grid gap-6 lg:grid-cols-[1fr_22rem]">
      <Card>
        <CardHeader
          title="All datasets"
          description={total === 1 ? "1 dataset" : `${total} datasets`}
        />
        {items.length === 0 ? (
          <p className="px-5 py-10 text-center text-sm text-slate-500">
            No datasets yet. Create one with the form, then import conversations into it.
          </p>
        ) : (
          <Table aria-label="Datasets">
            <thead>
              <tr>
                <Th>Name</Th>
                <Th className="text-right">Conversations</Th>
                <Th className="text-right">Messages</Th>
                <Th className="text-right">Steps</Th>
                <Th>Created</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {items.map((d) => (
                <tr key={d.id} className="hover:bg-slate-50" data-testid="dataset-row">
                  <Td>
                    <Link href={`/datasets/${d.id}`} className="font-medium text-brand-700 hover:underline">
                      {d.name}
                    </Link>
                    {d.description ? <p className="mt-0.5 line-clamp-2 text-xs text-slate-500">{d.description}</p> : null}
                  </Td>
                  <Td className="text-right tabular-nums">{d.conversation_count.toLocaleString()}</Td>
                  <Td className="text-right tabular-nums">{d.message_count.toLocaleString()}</Td>
                  <Td className="text-right tabular-nums">{d.step_count.toLocaleString()}</Td>
                  <Td className="whitespace-nowrap text-slate-500">
                    <time dateTime={d.created_at}>{formatDate(d.created_at)}</time>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <Pager offset={offset} pageSize={PAGE_SIZE} total={total} onOffset={setOffset} />
      </Card>
      <CreateDatasetForm onCreated={() => setOffset(0)} />
    </div>
  );
}

function CreateDatasetForm({ onCreated }: { onCreated: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [created, setCreated] = useState<Dataset | null>(null);

  const mutation = useMutation({
    mutationFn: async () =>
      (await apiFetch<Dataset>("/datasets", { method: "POST", json: { name, description: description || undefined } })).data,
    onSuccess: async (dataset) => {
      setName("");
      setDescription("");
      setFieldErrors({});
      setCreated(dataset);
      onCreated();
      await queryClient.invalidateQueries({ queryKey: ["datasets"] });
    },
    onError: (error) => {
      if (error instanceof ApiError && error.details.length) {
        setFieldErrors(Object.fromEntries(error.details.map((d) => [d.path, d.message])));
      }
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    setCreated(null);
    if (!name.trim()) {
      setFieldErrors({ name: "Give the dataset a name" });
      return;
    }
    mutation.mutate();
  }

  const generalError =
    mutation.error && !(mutation.error instanceof ApiError && mutation.error.details.length) ? mutation.error.message : null;

  return (
    <Card className="h-fit">
      <CardHeader title="New dataset" description="Conversations are imported into a dataset." />
      <form onSubmit={submit} className="space-y-4 px-5 py-4" noValidate aria-label="Create dataset">
        <Field id="dataset-name" label="Name" error={fieldErrors.name}>
          <Input
            id="dataset-name"
            name="name"
            value={name}
            maxLength={200}
            placeholder="Support bot, week 47"
            aria-invalid={!!fieldErrors.name}
            aria-describedby={fieldErrors.name ? "dataset-name-error" : undefined}
            onChange={(e) => setName(e.target.value)}
          />
        </Field>
        <Field id="dataset-description" label="Description" hint="Optional" error={fieldErrors.description}>
          <Textarea
            id="dataset-description"
            name="description"
            value={description}
            maxLength={5000}
            onChange={(e) => setDescription(e.target.value)}
          />
        </Field>
        {generalError ? (
          <p role="alert" className="text-sm text-red-600">
            {generalError}
          </p>
        ) : null}
        {created ? (
          <p role="status" className="text-sm text-emerald-700">
            Created “{created.name}”.
          </p>
        ) : null}
        <Button needs="annotator" type="submit" disabled={mutation.isPending} className="w-full">
          {mutation.isPending ? "Creating…" : "Create dataset"}
        </Button>
      </form>
    </Card>
  );
}
