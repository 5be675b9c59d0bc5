import { errorSchema } from "@/lib/schemas/common";
import type { ResponseSpec } from "./types";

export const badRequest: ResponseSpec = {
  description:
    "Invalid path, query or body; `details` lists each field. Ids anywhere (path, query, body, `metric.<id>`, `execution:<id>`) must be " +
    "between 1 and 2147483647, and text must not contain the NUL character (\\u0000)",
  schema: errorSchema,
};
export const notFoundResponse: ResponseSpec = { description: "Unknown id", schema: errorSchema };
export const forbiddenResponse: ResponseSpec = { description: "Not yours to change", schema: errorSchema };
export const conflictResponse: ResponseSpec = { description: "Conflicts with the current state", schema: errorSchema };
export const unprocessableResponse: ResponseSpec = { description: "Well-formed but invalid", schema: errorSchema };

export const totalCountHeader = {
  "X-Total-Count": { description: "Total number of items matching the query", schema: { type: "integer" } },
};
