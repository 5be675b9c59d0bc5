/**
 * The HTTP side of the two import endpoints: read the multipart form, check its text fields, run the
 * import, and answer with the import shape of shared/API.md (or the generic error shape for a bad form).
 */
import "server-only";
import { createHash } from "node:crypto";
import type { z } from "zod";
import { findImportOutcome, type IdempotencyScope } from "@/db/repositories/imports";
import { AppError } from "@/lib/errors";
import { refuseNul } from "./nul";
import { json, zodDetails } from "./route";
import { getConfig } from "@/lib/config";
import { assertDatasetExists } from "@/lib/datasets";
import { createAndImportForm, importIntoDatasetForm, mappingPreviewForm, type AnyImportMapping, type ImportFailure } from "@/lib/schemas/imports";
import { tooLargeIssue } from "@/lib/import/decode";
import { importConversations, type ImportTarget } from "@/lib/import";
import { previewMapping } from "@/lib/import/preview";
import { savedMappingFor } from "@/lib/import/saved-mappings";
import { readUploadForm } from "./upload-form";

function parseFields<T>(schema: z.ZodType<T, unknown>, fields: Record<string, string>): T {
  refuseNul(fields, "form field");
  const parsed = schema.safeParse(fields);
  if (parsed.success) {
    // The mapping field is JSON text: a \u0000 escape in it is NUL once parsed.
    refuseNul(parsed.data, "form field");
    return parsed.data;
  }
  const details = zodDetails(parsed.error);
  throw new AppError("bad_request", `Invalid form field (${details[0]?.path}: ${details[0]?.message})`, details);
}

/** What a key may be: 1–255 visible ASCII characters (a UUID is the usual choice). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.headers.get("idempotency-key");
  if (key === null) return undefined;
  const trimmed = key.trim().replace(/^"(.*)"$/, "$1");
  if (!IDEMPOTENCY_KEY.test(trimmed)) {
    throw new AppError("bad_request", "Invalid Idempotency-Key header: use 1 to 255 visible ASCII characters, e.g. a UUID", [
      { path: "Idempotency-Key", message: "must be 1 to 255 visible ASCII characters" },
    ]);
  }
  return trimmed;
}

/** The request as the key stands for it: the file's bytes and every form field. */
function fingerprintOf(files: Array<{ bytes: Uint8Array }>, fields: Record<string, string>): string {
  const hash = createHash("sha256");
  files.forEach((f, i) => {
    // The first file alone hashes as before, so stored keys keep matching.
    if (i) hash.update(`\u0000file ${i}\u0000`);
    hash.update(f.bytes);
  });
  for (const name of Object.keys(fields).sort()) hash.update(`\u0000${name}\u0000${fields[name]}`);
  return hash.digest("hex");
}

type Answer = { status: number; body: unknown; replayed: boolean };

/** Imports running now under a key, so a retry that arrives before the first finishes waits for it. */
const inFlight = new Map<string, { fingerprint: string; answer: Promise<Answer> }>();

function keyReused(key: string): AppError {
  return new AppError(
    "unprocessable",
    `Idempotency-Key '${key}' was already used for a different request (another file or other form fields); use a new key for a new import`,
    [{ path: "Idempotency-Key", message: "already used with a different file or form fields" }],
  );
}

const answerResponse = (a: Answer) => json(a.body, { status: a.status, headers: a.replayed ? { "Idempotent-Replayed": "true" } : undefined });

async function runImport(
  req: Request,
  context: { userId: string; scope: string },
  target: (fields: Record<string, string>) => Promise<{ target: ImportTarget; getFeedback: boolean; mapping?: AnyImportMapping; joinKey?: string }>,
) {
  const maxBytes = getConfig().MAX_IMPORT_BYTES;
  const key = idempotencyKeyOf(req);
  const read = await readUploadForm(req, { maxBytes });
  if (!read.ok) {
    const body: ImportFailure = {
      success: false,
      errors: [tooLargeIssue(read.tooLarge.size, maxBytes, read.tooLarge.atLeast)],
      warnings: [],
    };
    return json(body, { status: 413 });
  }
  const { target: chosen, getFeedback, mapping, joinKey } = await target(read.form.fields);
  const files = read.form.files;
  if (files.length > 1 && !joinKey) {
    throw new AppError("bad_request", `${files.length} files were sent: name the field that joins their records in 'join_key' (e.g. question_id)`, [
      { path: "join_key", message: "required when several files are sent" },
    ]);
  }
  if (files.length > 1 && mapping) {
    throw new AppError("bad_request", "A mapping reads one file: send several files with 'join_key' and no mapping", [{ path: "mapping", message: "not with several files" }]);
  }
  const join = files.length > 1 && joinKey ? { key: joinKey, files: files.map((f) => ({ name: f.filename, bytes: f.bytes })) } : undefined;
  const run = (idempotency?: IdempotencyScope) =>
    importConversations({ bytes: read.form.file.bytes, target: chosen, getFeedback, maxBytes, idempotency, mapping, join });
  if (key === undefined) {
    const outcome = await run();
    return json(outcome.body, { status: outcome.status });
  }

  // Same key and same request → the first outcome, whether it is stored or still being produced.
  const scope: IdempotencyScope = { userId: context.userId, scope: context.scope, key, fingerprint: fingerprintOf(read.form.files, read.form.fields) };
  const slot = `${scope.userId}\u0000${scope.scope}\u0000${key}`;
  const running = inFlight.get(slot);
  if (running) {
    if (running.fingerprint !== scope.fingerprint) throw keyReused(key);
    return answerResponse({ ...(await running.answer), replayed: true });
  }
  // Registered before the first await, so a second request with the key finds this one in flight.
  const answer = (async (): Promise<Answer> => {
    const stored = await findImportOutcome(scope);
    if (stored) {
      if (stored.fingerprint !== scope.fingerprint) throw keyReused(key);
      return { status: stored.status, body: stored.body, replayed: true };
    }
    const outcome = await run(scope);
    return { status: outcome.status, body: outcome.body, replayed: false };
  })();
  inFlight.set(slot, { fingerprint: scope.fingerprint, answer });
  try {
    return answerResponse(await answer);
  } finally {
    if (inFlight.get(slot)?.answer === answer) inFlight.delete(slot);
  }
}

/** The `mapping` field, or the caller's saved mapping named by `mapping_id` (404 when they have none with that id). */
async function mappingOf(form: { mapping?: AnyImportMapping; mapping_id?: number }, userId: string): Promise<AnyImportMapping | undefined> {
  return form.mapping_id === undefined ? form.mapping : await savedMappingFor(form.mapping_id, userId);
}

/** `POST /datasets/{id}/import`. */
export async function importIntoDatasetResponse(req: Request, datasetId: number, userId: string): Promise<Response> {
  // Refuse an unknown dataset before reading a large upload; the insert checks again in its transaction.
  await assertDatasetExists(datasetId);
  return await runImport(req, { userId, scope: `POST /datasets/${datasetId}/import` }, async (fields) => {
    const form = parseFields(importIntoDatasetForm, fields);
    return { target: { datasetId }, getFeedback: form.get_feedback, mapping: await mappingOf(form, userId), joinKey: form.join_key };
  });
}

/** `POST /datasets/import`: the dataset is created in the import's transaction, so a failure leaves none. */
export async function createAndImportResponse(req: Request, callerId: string, open: boolean): Promise<Response> {
  return await runImport(req, { userId: callerId, scope: "POST /datasets/import" }, async (fields) => {
    const form = parseFields(createAndImportForm, fields);
    return {
      // `user_id` names the owner only in the one-person mode, as for POST /datasets; with credentials the caller owns it.
      target: { create: { name: form.name, description: form.description ?? null, userId: open ? (form.user_id ?? callerId) : callerId } },
      getFeedback: form.get_feedback,
      mapping: await mappingOf(form, callerId),
      joinKey: form.join_key,
    };
  });
}

/** `POST /import-mappings/preview`: the mapping tried on the file, nothing written (200 whether or not it would import). */
export async function mappingPreviewResponse(req: Request, userId: string): Promise<Response> {
  const maxBytes = getConfig().MAX_IMPORT_BYTES;
  const read = await readUploadForm(req, { maxBytes });
  if (!read.ok) throw new AppError("payload_too_large", `The file is larger than MAX_IMPORT_BYTES (${maxBytes} bytes)`, [{ path: "file", message: tooLargeIssue(read.tooLarge.size, maxBytes, read.tooLarge.atLeast).message }]);
  if (read.form.files.length > 1) throw new AppError("bad_request", "A mapping reads one file: send one", [{ path: "file", message: "one file only" }]);
  const form = parseFields(mappingPreviewForm, read.form.fields);
  const mapping = await mappingOf(form, userId);
  return json(await previewMapping(read.form.file.bytes, mapping!, maxBytes));
}
