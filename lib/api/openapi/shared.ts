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

/** A page that can be followed by keyset paging (`cursor`). */
export const nextCursorHeader = {
  "X-Next-Cursor": {
    description: "When the page is full: the `cursor` of the page after it (keyset paging: reads on from this page's last row instead of skipping `offset` rows)",
    schema: { type: "string" },
  },
};

/** The grid's page: its total may be estimated on a large filtered dataset, and it says which. */
export const gridPageHeaders = {
  ...totalCountHeader,
  "X-Total-Count-Kind": {
    description:
      "`exact`, or `estimated` when a `filter` is applied to a dataset of more than 5,000 conversations: `X-Total-Count` is then the " +
      "matches among its first 5,000 conversations scaled to its size, at least the rows up to this page plus one when the page is full " +
      "(a page with fewer rows than `limit` gives the exact total). Unfiltered totals, and the total of a filter that is one metric " +
      "verdict alone (`metric.<id>==pass`, `!=fail`, `==none`, ...), are kept as rows and results are written, never estimated",
    schema: { type: "string", enum: ["exact", "estimated"] },
  },
  ...nextCursorHeader,
};
