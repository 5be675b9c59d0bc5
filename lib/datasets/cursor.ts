/** Keyset paging's cursors (the grid's conversation level, a dataset's conversations): opaque to clients. */
import { AppError } from "@/lib/errors";

/** A cursor holding the position of the last conversation of a page. */
export function encodeCursor(position: number): string {
  return Buffer.from(JSON.stringify({ p: position })).toString("base64url");
}

/** The position a cursor holds, or a 422 naming the parameter. */
export function decodeCursor(cursor: string, param = "cursor"): number {
  try {
    const value = (JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { p?: unknown }).p;
    if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  } catch {
    // Not ours: refused below.
  }
  const message = "is not a cursor this API gave (the X-Next-Cursor of an earlier page)";
  throw new AppError("unprocessable", `Invalid query parameter ${param}: ${message}`, [{ path: param, message }]);
}
