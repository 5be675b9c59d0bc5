"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { Menu, MenuItem, MenuSeparator, menuItemClass } from "@/components/ui/popover";
import { apiFetch } from "@/lib/client/api";
import type { Metric, MetricTemplate } from "@/lib/schemas/metrics";
import { levelNames } from "./labels";

const levelOrder = ["conversation", "message", "step"] as const;

function TemplateItems({ add, busy, close }: { add: (templateId: number) => void; busy: boolean; close: () => void }) {
  const templates = useQuery({
    queryKey: ["metric-templates"],
    queryFn: async () => (await apiFetch<MetricTemplate[]>("/metric-templates")).data,
    staleTime: 60_000,
  });

  if (templates.isPending) return <p className="px-3 py-2 text-sm text-slate-500">Loading templates…</p>;
  if (templates.error) return <p className="px-3 py-2 text-sm text-red-700">Could not load templates: {templates.error.message}</p>;
  return (
    <div className="max-h-96 overflow-y-auto">
      {levelOrder.map((level) => {
        const list = templates.data.filter((t) => t.evaluation_level === level);
        if (list.length === 0) return null;
        return (
          <div key={level} role="group" aria-label={`${levelNames[level]} templates`}>
            <p className="px-3 pb-1 pt-2 text-[11px] font-semibold uppercase tracking-wide text-slate-400">{levelNames[level]} level</p>
            {list.map((t) => (
              <MenuItem
                key={t.id}
                disabled={busy}
                onSelect={() => {
                  close();
                  add(t.id);
                }}
              >
                <span className="flex-1">{t.name}</span>
                {t.is_system ? null : <span className="text-xs text-slate-400">yours</span>}
              </MenuItem>
            ))}
          </div>
        );
      })}
    </div>
  );
}

/** Add a metric in one click from a template, or open the editor for a custom one. */
export function AddMetricMenu({ datasetId, onAdded, onError }: { datasetId: number; onAdded: (m: Metric) => void; onError: (e: Error) => void }) {
  const queryClient = useQueryClient();
  const add = useMutation({
    mutationFn: async (templateId: number) =>
      (await apiFetch<Metric>("/evaluation-pipeline-nodes", { method: "POST", json: { dataset_id: datasetId, template_id: templateId } })).data,
    onSuccess: async (metric) => {
      await queryClient.invalidateQueries({ queryKey: ["metrics", datasetId] });
      onAdded(metric);
    },
    onError,
  });
  return (
    <Menu
      needs="annotator"
      label="Add metric"
      align="end"
      trigger={<>{add.isPending ? "Adding…" : "+ Add metric"}</>}
      triggerClassName="inline-flex h-9 items-center gap-1 rounded-md border border-slate-300 bg-white px-3 text-sm font-medium text-slate-800 shadow-sm hover:bg-slate-50 disabled:cursor-not-allowed disabled:text-slate-400 disabled:hover:bg-white"
    >
      {(close) => (
        <div className="w-72">
          <Link role="menuitem" href={`/datasets/${datasetId}/metrics/new`} className={menuItemClass}>
            Custom metric…
          </Link>
          <Link role="menuitem" href="/templates" className={menuItemClass}>
            Browse the template library…
          </Link>
          <MenuSeparator />
          <TemplateItems add={(id) => add.mutate(id)} busy={add.isPending} close={close} />
        </div>
      )}
    </Menu>
  );
}
