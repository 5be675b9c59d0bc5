/** Tools over generations: start one against a target (annotator, as POST /generations) and follow it (viewer). */
import { z } from "zod";
import { isFinalStatus } from "@/lib/execution-status";
import { getGeneration, startGeneration } from "@/lib/generation";
import { bodyId } from "@/lib/schemas/common";
import { createGenerationBody, type Generation } from "@/lib/schemas/generations";
import { clip, dropEmpty } from "./compact";
import { defineTool } from "./define";
import { waitFor, waitSecondsArg } from "./wait";

function compactGeneration(g: Generation) {
  return dropEmpty({
    id: g.id,
    dataset_id: g.dataset_id,
    source_dataset_id: g.source_dataset_id,
    target_id: g.target_id,
    mode: g.mode,
    status: g.status,
    total: g.total,
    completed: g.completed,
    failed: g.failed,
    usage: g.usage,
    stop_reasons: Object.fromEntries(Object.entries(g.stop_reasons).filter(([, n]) => n > 0)),
    stop_reason: g.stop_reason,
    error: clip(g.error, 300),
    started_at: g.started_at,
    finished_at: g.finished_at,
  });
}

export const startGenerationTool = defineTool({
  name: "start_generation",
  title: "Generate conversations with a target",
  description:
    "Send a dataset's conversations to a target (an agent or model registered in Turnscope) and keep what it answers as a new dataset (dataset_id in the answer): " +
    "next_turn (each assistant turn's history sent, the candidate stored beside the original), replay (the source's user turns sent in order) or simulate (a model " +
    "plays the user). filter picks source conversations in the grid's language. dry_run prices it and creates nothing; max_cost_usd stops it at that cost. " +
    "Follow it with get_generation, then judge the new dataset with start_run and compare_runs pair_by source.",
  role: "annotator",
  readOnly: false,
  openWorld: true,
  input: createGenerationBody,
  run: async (args, { caller }) => {
    const started = await startGeneration(args, caller.userId);
    return started.dryRun ? { dry_run: true, estimate: started.estimate } : compactGeneration(started.generation);
  },
});

export const getGenerationTool = defineTool({
  name: "get_generation",
  title: "Follow a generation",
  description: "A generation's status, counts, usage and stop reasons; with wait_seconds it waits up to that long for it to end first.",
  role: "viewer",
  readOnly: true,
  input: z.object({ id: bodyId.describe("Generation id"), wait_seconds: waitSecondsArg }),
  run: async ({ id, wait_seconds }, { signal, progress }) =>
    compactGeneration(
      await waitFor(() => getGeneration(id), (g) => isFinalStatus(g.status), wait_seconds, signal, {
        progress,
        measure: (g) => ({ done: g.completed + g.failed, total: g.total, message: `generation ${g.id} ${g.status}: ${g.completed + g.failed} of ${g.total} conversations` }),
      }),
    ),
});
