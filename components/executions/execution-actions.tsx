"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Button } from "@/components/ui/button";
import { exportFormats } from "@/components/results/export-formats";
import { Menu, menuItemClass } from "@/components/ui/popover";
import { apiFetch } from "@/lib/client/api";
import type { Execution } from "@/lib/schemas/executions";
import { isActiveStatus } from "@/lib/execution-status";

export function isRunning(e: Pick<Execution, "status">): boolean {
  return isActiveStatus(e.status);
}

/** The run request that repeats an execution's scope and settings (optionally only its failures). */
export function rerunBody(e: Execution, retry: boolean) {
  return {
    dataset_id: e.dataset_id,
    pipeline_node_id: e.pipeline_node_id,
    entity_type: e.meta.entity_type,
    entity_id: e.meta.entity_id,
    execution_mode: e.meta.execution_mode,
    batch_size: e.meta.batch_size,
    retry,
    ...(e.meta.model ? { model_name: e.meta.model } : {}),
  };
}


/** Download links for an execution's results. */
export function ExportMenu({ executionId }: { executionId: number }) {
  return (
    <Menu
      label={`Export run #${executionId}`}
      align="end"
      trigger={<>Export ▾</>}
      triggerClassName="inline-flex h-8 items-center whitespace-nowrap rounded-md border border-slate-300 bg-white px-3 text-sm font-medium text-slate-800 shadow-sm hover:bg-slate-50"
    >
      {(close) =>
        exportFormats.map((f) => (
          <a
            key={f.query}
            role="menuitem"
            href={`/api/evaluation-pipeline-executions/${executionId}/export?${f.query}`}
            download
            className={menuItemClass}
            // A download leaves the page where it is, so the menu must close by itself.
            onClick={close}
          >
            {f.label}
          </a>
        ))
      }
    </Menu>
  );
}

/** Cancel a running execution, or run its scope again (everything, or only what failed). */
export function ExecutionActions({
  execution,
  onStarted,
  onError,
  compact = false,
}: {
  execution: Execution;
  onStarted: (e: Execution) => void;
  onError: (e: Error) => void;
  compact?: boolean;
}) {
  const queryClient = useQueryClient();
  const invalidate = () => queryClient.invalidateQueries({ queryKey: ["executions", execution.dataset_id] });
  const cancel = useMutation({
    mutationFn: async () => (await apiFetch<Execution>(`/evaluation-pipeline-executions/${execution.id}`, { method: "DELETE" })).data,
    onSuccess: async (e) => {
      queryClient.setQueryData(["execution", e.id], e);
      await invalidate();
    },
    onError,
  });
  const rerun = useMutation({
    mutationFn: async (retry: boolean) =>
      (await apiFetch<Execution>("/evaluation-pipeline-executions/run", { method: "POST", json: rerunBody(execution, retry) })).data,
    onSuccess: async (e) => {
      onStarted(e);
      await invalidate();
    },
    onError,
  });
  const size = compact ? "sm" : "md";
  return (
    <div className="flex items-center justify-end gap-1.5">
      {isRunning(execution) ? (
        <Button needs="annotator" variant="danger" size={size} className="whitespace-nowrap" disabled={cancel.isPending} onClick={() => cancel.mutate()} aria-label={`Cancel run #${execution.id}`}>
          {cancel.isPending ? "Cancelling…" : "Cancel"}
        </Button>
      ) : (
        <>
          <Button needs="annotator" variant="secondary" size={size} className="whitespace-nowrap" disabled={rerun.isPending} onClick={() => rerun.mutate(false)} aria-label={`Re-run run #${execution.id}`}>
            Re-run
          </Button>
          {execution.failed_evaluations > 0 || execution.status !== "completed" ? (
            <Button needs="annotator" variant="secondary" size={size} className="whitespace-nowrap" disabled={rerun.isPending} onClick={() => rerun.mutate(true)} aria-label={`Retry failed of run #${execution.id}`}>
              Retry failed
            </Button>
          ) : null}
        </>
      )}
      <ExportMenu executionId={execution.id} />
    </div>
  );
}
