/**
 * Reading an import upload (multipart/form-data) as a stream with busboy, so the size limit is enforced
 * while reading: an oversized file is refused once it passes the limit, never buffered whole.
 */
import "server-only";
import busboy from "busboy";
import { AppError } from "@/lib/errors";

export type UploadForm = {
  file: { bytes: Buffer; filename: string };
  fields: Record<string, string>;
};

export type UploadRead = { ok: true; form: UploadForm } | { ok: false; tooLarge: { size: number; atLeast: boolean } };

/** Room for the multipart boundaries and text fields around the file itself. */
const MULTIPART_OVERHEAD = 1024 * 1024;

const badRequest = (message: string, path = "file") => new AppError("bad_request", message, [{ path, message }]);

/** Resolves when the parser wants more input, or will never want it again. */
function drained(parser: busboy.Busboy): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      for (const event of ["drain", "close", "error"]) parser.off(event, done);
      resolve();
    };
    for (const event of ["drain", "close", "error"]) parser.on(event, done);
  });
}

/** Parse the multipart body; throws a 400 AppError for a body that is not a usable form. */
export async function readUploadForm(req: Request, opts: { maxBytes: number }): Promise<UploadRead> {
  const contentType = req.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw badRequest("Send the file as multipart/form-data with a 'file' field", "(body)");
  }
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > opts.maxBytes + MULTIPART_OVERHEAD) {
    return { ok: false, tooLarge: { size: declared, atLeast: false } };
  }
  if (!req.body) throw badRequest("The request has no body: send a 'file' field");

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { "content-type": contentType },
      limits: { fileSize: opts.maxBytes, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 40 },
    });
  } catch (error) {
    throw badRequest(`Malformed multipart/form-data: ${(error as Error).message}`, "(body)");
  }

  const reader = req.body.getReader();
  const fields = new Map<string, string>();
  let file: UploadForm["file"] | undefined;
  let tooLarge = false;
  let fieldTooLong: string | undefined;
  let fileDone: Promise<void> | undefined;

  const parsed = new Promise<void>((resolve, reject) => {
    parser.on("file", (name, stream, info) => {
      if (name !== "file" || file) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("limit", () => {
        tooLarge = true;
        // Stop reading the request: the rest of an oversized upload is never needed.
        void reader.cancel().catch(() => undefined);
        resolve();
      });
      fileDone = new Promise<void>((done) =>
        stream.on("end", () => {
          file = { bytes: Buffer.concat(chunks), filename: info.filename ?? "upload" };
          done();
        }),
      );
    });
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) fieldTooLong = name;
      else if (!fields.has(name)) fields.set(name, value);
    });
    parser.on("close", () => resolve());
    parser.on("error", (error: Error) => {
      void reader.cancel().catch(() => undefined);
      reject(badRequest(`Malformed multipart/form-data: ${error.message}`, "(body)"));
    });
  });

  const pump = (async () => {
    try {
      while (!tooLarge) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!parser.write(value)) await drained(parser);
      }
    } catch {
      // A cancelled or broken request body ends the form; the checks below say what is missing.
    } finally {
      if (!tooLarge) parser.end();
    }
  })();

  await Promise.all([parsed, pump]);
  // Content-Length counts the whole form, so it is the file's size give or take the boundaries.
  if (tooLarge) return { ok: false, tooLarge: Number.isFinite(declared) ? { size: Math.max(declared, opts.maxBytes + 1), atLeast: false } : { size: opts.maxBytes, atLeast: true } };
  if (fileDone) await fileDone;
  if (fieldTooLong) throw badRequest(`Field '${fieldTooLong}' is too long (64 KB at most)`, fieldTooLong);
  if (!file) throw badRequest("Missing required multipart field 'file'");
  return { ok: true, form: { file, fields: Object.fromEntries(fields) } };
}
