/**
 * Importing a conversations file: decode → parse → detect format and normalise → validate in stages →
 * insert in one transaction. The result is the wire body of shared/API.md ("Import") with its status.
 */
import "server-only";
import { insertConversationsBulk, saveImportOutcome, type BulkResult, type IdempotencyScope } from "@/db/repositories/imports";
import { notFound } from "@/lib/errors";
import { getConfig } from "@/lib/config";
import type { AnyImportMapping, ImportFailure, ImportSuccess } from "@/lib/schemas/imports";
import type { FeedbackDeps } from "./feedback";
import { buildFeedback } from "./feedback";
import { checkUpload, fixMakesValid, type JoinRequest } from "./check";

export { checkUpload, type CheckedUpload, type JoinRequest } from "./check";

export type ImportTarget = { datasetId: number } | { create: { name: string; description: string | null; userId: string } };

export type ImportOutcome =
  | { ok: true; status: 200 | 201; body: ImportSuccess }
  | { ok: false; status: 400 | 413 | 415 | 422; body: ImportFailure };

/** Validate an upload and, when it passes, insert all of it into the target dataset in one transaction. */
export async function importConversations(input: {
  bytes: Uint8Array;
  target: ImportTarget;
  getFeedback: boolean;
  maxBytes?: number;
  deps?: FeedbackDeps;
  /** Read the file with this mapping instead of detecting its format. */
  mapping?: AnyImportMapping;
  /** Store the outcome under this key (with the import's insert, in one transaction, when it succeeds). */
  idempotency?: IdempotencyScope;
  /** Several files joined on a key (MT-Bench questions + answers). */
  join?: JoinRequest;
}): Promise<ImportOutcome> {
  const opts = { maxBytes: input.maxBytes ?? getConfig().MAX_IMPORT_BYTES, mapping: input.mapping, join: input.join };
  const checked = checkUpload(input.bytes, opts);
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
          fixWorks: (t) => fixMakesValid(checked.text, t, opts),
        },
        input.deps,
      );
      if (checked.suggestedMapping) {
        body.llm_feedback.suggested_mapping = checked.suggestedMapping;
        if (checked.mappingScore) body.llm_feedback.mapping_score = checked.mappingScore;
        body.llm_feedback.analysis += ` No known format matched, but this mapping imports the file (checked): ${JSON.stringify(checked.suggestedMapping)}. Send it as the 'mapping' form field.`;
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
