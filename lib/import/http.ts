/**
 * The HTTP side of the two import endpoints: read the multipart form, check its text fields, run the
 * import, and answer with the import shape of shared/API.md (or the generic error shape for a bad form).
 */
import "server-only";
import type { z } from "zod";
import { AppError } from "@/lib/api/errors";
import { json, zodDetails } from "@/lib/api/route";
import { getConfig } from "@/lib/config";
import { assertDatasetExists } from "@/lib/datasets";
import { createAndImportForm, importIntoDatasetForm, type ImportFailure } from "@/lib/schemas/imports";
import { tooLargeIssue } from "./decode";
import { importConversations, type ImportTarget } from "./index";
import { readUploadForm } from "./upload";

function parseFields<T>(schema: z.ZodType<T, unknown>, fields: Record<string, string>): T {
  const parsed = schema.safeParse(fields);
  if (parsed.success) return parsed.data;
  const details = zodDetails(parsed.error);
  throw new AppError("bad_request", `Invalid form field (${details[0]?.path}: ${details[0]?.message})`, details);
}

async function runImport(req: Request, target: (fields: Record<string, string>) => { target: ImportTarget; getFeedback: boolean }) {
  const maxBytes = getConfig().MAX_IMPORT_BYTES;
  const read = await readUploadForm(req, { maxBytes });
  if (!read.ok) {
    const body: ImportFailure = {
      success: false,
      errors: [tooLargeIssue(read.tooLarge.size, maxBytes, read.tooLarge.atLeast)],
      warnings: [],
    };
    return json(body, { status: 413 });
  }
  const { target: chosen, getFeedback } = target(read.form.fields);
  const outcome = await importConversations({ bytes: read.form.file.bytes, target: chosen, getFeedback, maxBytes });
  return json(outcome.body, { status: outcome.status });
}

/** `POST /datasets/{id}/import`. */
export async function importIntoDatasetResponse(req: Request, datasetId: number): Promise<Response> {
  // Refuse an unknown dataset before reading a large upload; the insert checks again in its transaction.
  assertDatasetExists(datasetId);
  return runImport(req, (fields) => {
    const form = parseFields(importIntoDatasetForm, fields);
    return { target: { datasetId }, getFeedback: form.get_feedback };
  });
}

/** `POST /datasets/import`: the dataset is created in the import's transaction, so a failure leaves none. */
export async function createAndImportResponse(req: Request, callerId: string): Promise<Response> {
  return runImport(req, (fields) => {
    const form = parseFields(createAndImportForm, fields);
    return {
      target: { create: { name: form.name, description: form.description ?? null, userId: form.user_id ?? callerId } },
      getFeedback: form.get_feedback,
    };
  });
}
