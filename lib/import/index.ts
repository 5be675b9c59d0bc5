/**
 * Importing a conversations file: decode → parse → detect format and normalise → validate in stages →
 * insert in one transaction. The result is the wire body of shared/API.md ("Import") with its status.
 */
import "server-only";
import { insertConversationsBulk, saveImportOutcome, type BulkResult, type IdempotencyScope } from "@/db/repositories/imports";
import { AppError, notFound } from "@/lib/errors";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { runOffLoop, type Deadline } from "@/lib/input-pool";
import { sideUsage } from "@/lib/judge/side-usage";
import type { AnyImportMapping, ImportFailure, ImportSuccess, LlmFeedback, SuggestedTransformation } from "@/lib/schemas/imports";
import { modelMapping, type ModelMappingDeps } from "./structure/model-mapping";
import type { FeedbackDeps } from "./feedback";
import { buildFeedback } from "./feedback";
import { checkUpload, fixMakesValid, type CheckedUpload, type CheckOptions, type JoinRequest } from "./check";
import { isZip } from "./formats/eval-archive";
import { joinChecked } from "./checked-parts";

export { checkUpload, type CheckedUpload, type JoinRequest } from "./check";

/**
 * No adapter and no proposal read the file: the judge model writes a mapping from its skeleton
 * (lib/import/structure/model-mapping.ts), each try applied to the whole file on the input pool and scored;
 * one that imports it is offered, checked, as the structural reader's would be. Its calls join the
 * feedback's `usage`.
 */
async function askModelForMapping(feedback: LlmFeedback, skeleton: string, bytes: Uint8Array, opts: CheckOptions, deps?: ModelMappingDeps): Promise<void> {
  const usage = sideUsage();
  const found = await modelMapping(
    {
      skeleton,
      tryMapping: async (mapping) => {
        const tried = await checkUploadOffLoop(bytes, { ...opts, mapping, scoreMapping: true, inferInOneStep: false });
        return tried.ok ? { ok: true, score: tried.mappingScore, conversations: tried.counts.conversations, messages: tried.counts.messages } : { ok: false, errors: tried.errors };
      },
    },
    usage,
    deps,
  ).catch((error: unknown) => {
    log.warn("import mapping: asking the model failed", { error: (error as Error).message });
    return undefined;
  });
  if (usage.judge_calls > 0) {
    const before = feedback.usage ?? { judge_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
    feedback.usage = {
      judge_calls: before.judge_calls + usage.judge_calls,
      input_tokens: before.input_tokens + usage.input_tokens,
      output_tokens: before.output_tokens + usage.output_tokens,
      cost_usd: before.cost_usd === null || usage.cost_usd === null ? null : before.cost_usd + usage.cost_usd,
    };
  }
  if (!found) return;
  if (found.mapping) {
    feedback.suggested_mapping = found.mapping;
    feedback.mapping_by = found.model;
    feedback.mapping_rounds = found.rounds;
    if (found.score) feedback.mapping_score = found.score;
    feedback.analysis += ` No known format matched and the structural reader found no mapping; the model ${found.model} wrote one that imports the file (checked, in ${found.rounds} round${found.rounds === 1 ? "" : "s"}): ${JSON.stringify(found.mapping)}. Send it as the 'mapping' form field.`;
  } else {
    feedback.analysis += ` The model${found.model ? ` ${found.model}` : ""} was asked for a mapping ${found.rounds} time${found.rounds === 1 ? "" : "s"} and none imported the file (last: ${found.lastError.slice(0, 300)}).`;
  }
}

export type ImportTarget = { datasetId: number } | { create: { name: string; description: string | null; userId: string } };

export type ImportOutcome =
  | { ok: true; status: 200 | 201; body: ImportSuccess }
  | { ok: false; status: 400 | 413 | 415 | 422; body: ImportFailure };

/**
 * Uploads up to this size are checked in process (a few milliseconds); larger ones, every ZIP archive or
 * gzip file and every join of several files are checked on the input pool, off the request loop.
 */
export const INLINE_IMPORT_BYTES = 64 * 1024;

function importDeadline(): Deadline {
  return { ms: getConfig().IMPORT_TIMEOUT_MS, setting: "IMPORT_TIMEOUT_MS", what: "Reading the file" };
}

/**
 * checkUpload on the input pool (lib/input-pool.ts) within IMPORT_TIMEOUT_MS; a small upload in process.
 * An upload that runs past its time is refused (422) naming the setting, as any other refused file.
 */
export async function checkUploadOffLoop(bytes: Uint8Array, opts: CheckOptions): Promise<CheckedUpload> {
  // A small compressed file can inflate to the whole limit (and be read again as what it holds): never in process.
  const compressed = isZip(bytes) || (bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b);
  const small = bytes.length <= INLINE_IMPORT_BYTES && !compressed && !opts.join;
  if (small) return checkUpload(bytes, opts);
  try {
    return await runOffLoop<CheckedUpload>("checkUpload", { bytes, opts }, importDeadline(), () => checkUpload(bytes, opts), joinChecked);
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    const suggestion = "Split the conversations into smaller files and import them one after another";
    return { ok: false, status: error.status === 413 ? 413 : 422, errors: [{ path: "(file)", message: error.message, suggestion }], warnings: [] };
  }
}

/** Whether a suggested fix makes the file valid, checked on the input pool (a fix that takes too long does not). */
async function fixWorksOffLoop(text: string | undefined, t: SuggestedTransformation, opts: { maxBytes: number; mapping?: AnyImportMapping }): Promise<boolean> {
  if (text === undefined) return false;
  if (text.length <= INLINE_IMPORT_BYTES / 4) return fixMakesValid(text, t, opts);
  return await runOffLoop<boolean>("fixWorks", { text, transformation: t, opts }, importDeadline(), () => fixMakesValid(text, t, opts)).catch(() => false);
}

/** Validate an upload and, when it passes, insert all of it into the target dataset in one transaction. */
export async function importConversations(input: {
  bytes: Uint8Array;
  target: ImportTarget;
  getFeedback: boolean;
  maxBytes?: number;
  deps?: FeedbackDeps & { mapping?: ModelMappingDeps };
  /** Read the file with this mapping instead of detecting its format. */
  mapping?: AnyImportMapping;
  /** Store the outcome under this key (with the import's insert, in one transaction, when it succeeds). */
  idempotency?: IdempotencyScope;
  /** Several files joined on a key (MT-Bench questions + answers). */
  join?: JoinRequest;
}): Promise<ImportOutcome> {
  const opts = { maxBytes: input.maxBytes ?? getConfig().MAX_IMPORT_BYTES, mapping: input.mapping, join: input.join };
  const checked = await checkUploadOffLoop(input.bytes, opts);
  if (!checked.ok) {
    const body: ImportFailure = { success: false, errors: checked.errors, warnings: checked.warnings };
    if (checked.format) body.format = checked.format;
    if (checked.notImported) body.not_imported = checked.notImported;
    if (input.getFeedback) {
      body.llm_feedback = await buildFeedback(
        {
          errors: checked.feedbackInput?.errors ?? checked.errors,
          data: checked.feedbackInput?.data,
          excerpt: checked.text?.slice(0, 4000) ?? "",
          format: checked.format,
          fixWorks: (t) => fixWorksOffLoop(checked.text, t, opts),
        },
        input.deps,
      );
      if (checked.suggestedMapping) {
        body.llm_feedback.suggested_mapping = checked.suggestedMapping;
        body.llm_feedback.mapping_by = "structure";
        if (checked.mappingScore) body.llm_feedback.mapping_score = checked.mappingScore;
        body.llm_feedback.analysis += ` No known format matched, but this mapping imports the file (checked): ${JSON.stringify(checked.suggestedMapping)}. Send it as the 'mapping' form field.`;
      } else if (checked.skeleton) {
        await askModelForMapping(body.llm_feedback, checked.skeleton, input.bytes, opts, input.deps?.mapping);
      }
    }
    if (input.idempotency) await saveImportOutcome(input.idempotency, checked.status, body);
    return { ok: false, status: checked.status, body };
  }

  let outcome: Extract<ImportOutcome, { ok: true }> | undefined;
  // Synchronous: with an Idempotency-Key it runs inside the import's transaction.
  const respond = (inserted: Extract<BulkResult, { ok: true }>) => {
    const body: ImportSuccess = {
      success: true,
      dataset_id: inserted.datasetId,
      format: checked.format,
      not_imported: checked.notImported,
      conversations_imported: inserted.conversations,
      messages_imported: inserted.messages,
      steps_imported: inserted.steps,
      records: checked.records,
      ...(checked.inferredMapping ? { mapping: checked.inferredMapping } : {}),
      errors: [],
      warnings: checked.warnings,
    };
    if (inserted.created && "create" in input.target) {
      const { name, description, userId } = input.target.create;
      body.dataset = {
        id: inserted.datasetId, name, description: description ?? null, user_id: userId, created_at: inserted.at, updated_at: inserted.at,
        conversation_count: inserted.conversations, message_count: inserted.messages, step_count: inserted.steps,
      };
    }
    outcome = { ok: true, status: inserted.created ? 201 : 200, body };
    return outcome;
  };
  const inserted = await insertConversationsBulk(input.target, checked.conversations, input.idempotency && { scope: input.idempotency, respond });
  if (!inserted.ok) throw notFound("Dataset", "datasetId" in input.target ? input.target.datasetId : "");
  return outcome ?? respond(inserted);
}
