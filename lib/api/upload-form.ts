/**
 * Reading an import upload (multipart/form-data) as a stream with busboy, so the size limit is enforced
 * while reading: an oversized file is refused once it passes the limit, never buffered whole.
 */
import "server-only";
import busboy from "busboy";
import { AppError } from "@/lib/errors";

export type UploadForm = {
  file: { bytes: Buffer; filename: string };
  /** Every `file` part in order (the first is `file`): several files are joined on `join_key`. */
  files: Array<{ bytes: Buffer; filename: string }>;
  fields: Record<string, string>;
};

/** Files one import may join. */
export const MAX_IMPORT_FILES = 10;

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
      limits: { fileSize: opts.maxBytes, files: MAX_IMPORT_FILES, fields: 20, fieldSize: 64 * 1024, parts: 40 },
    });
  } catch (error) {
    throw badRequest(`Malformed multipart/form-data: ${(error as Error).message}`, "(body)");
  }

  const reader = req.body.getReader();
  const fields = new Map<string, string>();
  const files: Array<UploadForm["file"] | undefined> = [];
  let received = 0;
  let tooLarge = false;
  let fieldTooLong: string | undefined;
  const filesDone: Array<Promise<void>> = [];

  const parsed = new Promise<void>((resolve, reject) => {
    parser.on("file", (name, stream, info) => {
      if (name !== "file") {
        stream.resume();
        return;
      }
      const slot = files.length;
      files.push(undefined);
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        // The limit is on everything uploaded together, not on each file.
        if (received > opts.maxBytes) stream.emit("limit");
      });
      stream.on("limit", () => {
        if (tooLarge) return;
        tooLarge = true;
        // Stop reading the request: the rest of an oversized upload is never needed.
        void reader.cancel().catch(() => undefined);
        resolve();
      });
      filesDone.push(
        new Promise<void>((done) =>
          stream.on("end", () => {
            files[slot] = { bytes: Buffer.concat(chunks), filename: info.filename ?? "upload" };
            done();
          }),
        ),
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
  await Promise.all(filesDone);
  if (fieldTooLong) throw badRequest(`Field '${fieldTooLong}' is too long (64 KB at most)`, fieldTooLong);
  const read = files.filter((f): f is UploadForm["file"] => f !== undefined);
  if (!read.length) throw badRequest("Missing required multipart field 'file'");
  return { ok: true, form: { file: read[0], files: read, fields: Object.fromEntries(fields) } };
}
