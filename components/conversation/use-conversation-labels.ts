"use client";

import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { apiFetch } from "@/lib/client/api";
import type { ConversationSummary } from "@/lib/schemas/datasets";

const PER_REQUEST = 500;

/**
 * What every page calls these conversations of a dataset: the server's `label` (name, else meta id,
 * else first words, else position — lib/conversation-label.ts), fetched by id so a page listing a few
 * cells of a large dataset loads only those. Until they arrive, or for an id the dataset lacks, the
 * fallback says the id.
 */
export function useConversationLabels(datasetId: number | null | undefined, ids: readonly number[]): (id: number) => string {
  const wanted = useMemo(() => [...new Set(ids)].sort((x, y) => x - y), [ids]);
  const query = useQuery({
    queryKey: ["conversation-labels", datasetId, wanted.join(",")],
    enabled: datasetId != null && wanted.length > 0,
    staleTime: 60_000,
    queryFn: async () => {
      const labels = new Map<number, string>();
      for (let i = 0; i < wanted.length; i += PER_REQUEST) {
        const chunk = wanted.slice(i, i + PER_REQUEST);
        const { data } = await apiFetch<ConversationSummary[]>(`/datasets/${datasetId}/conversations?limit=${PER_REQUEST}&ids=${chunk.join(",")}`);
        for (const c of data) labels.set(c.id, c.label);
      }
      return labels;
    },
  });
  const labels = query.data;
  return useMemo(() => (id: number) => labels?.get(id) ?? `conversation #${id}`, [labels]);
}

/** A cell's row as words: the conversation's label, and for a message or step its kind and id within it. */
export function entityWords(e: { entity_type: string; entity_id: number; conversation_id: number }, labelOf: (id: number) => string): string {
  const conversation = labelOf(e.conversation_id);
  return e.entity_type === "conversation" ? conversation : `${conversation} · ${e.entity_type} #${e.entity_id}`;
}
