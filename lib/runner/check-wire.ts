/** Messages between the server and the check thread (lib/runner/check-thread.ts, check-worker.ts). */
import type { EvaluationLevel } from "@/lib/vocabulary";
import type { CheckEntity, CheckOutcome, CheckSpec, CheckTree } from "@/lib/checks";

/** One cell to check; `tree` is sent only when it differs from the last one the thread holds (`treeKey`). */
export type CheckTask = { id: number; spec: CheckSpec; level: EvaluationLevel; entity: CheckEntity; treeKey: number; tree?: CheckTree };

export type FromCheckThread = { ready: true } | { id: number; ok: true; outcome: CheckOutcome } | { id: number; ok: false; message: string };
