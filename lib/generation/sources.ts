/**
 * Which source conversations a generation sends (issue 37): all of the dataset's, those named in
 * `conversation_ids`, those matching `filter` (the grid's filter language at the conversation level), or
 * the named ones that match the filter — resolved once, when the generation is created.
 */
import "server-only";
import { conversationIdsWhere } from "@/db/repositories/grid";
import { sourceConversationIds } from "@/db/repositories/targets";
import { AppError } from "@/lib/errors";
import { parseGridExtras } from "@/lib/results/grid";
import { gridQuery } from "@/lib/schemas/executions";
import type { CreateGenerationInput } from "@/lib/schemas/generations";

const filterSyntax = gridQuery.shape.filter.unwrap();

const badFilter = (message: string) => new AppError("unprocessable", `Invalid filter: ${message}`, [{ path: "filter", message }]);

/** The source conversation ids in grid order; 422 naming the field for ids of another dataset, a filter it cannot read, or nothing chosen. */
export async function chooseSources(datasetId: number, body: Pick<CreateGenerationInput, "conversation_ids" | "filter">): Promise<number[]> {
  let ids = await sourceConversationIds(datasetId, body.conversation_ids);
  if (body.conversation_ids && ids.length !== new Set(body.conversation_ids).size) {
    throw new AppError("unprocessable", `Some conversation_ids are not conversations of dataset ${datasetId}`, [{ path: "conversation_ids", message: `must be conversations of dataset ${datasetId}` }]);
  }
  if (body.filter !== undefined) {
    const syntax = filterSyntax.safeParse(body.filter);
    if (!syntax.success) throw badFilter(syntax.error.issues.map((i) => i.message).join("; "));
    let extras;
    try {
      extras = await parseGridExtras(datasetId, { level: "conversation", filter: body.filter, limit: 1, offset: 0 });
    } catch (error) {
      // The grid's words ("query parameter filter: …") said for a body field.
      if (error instanceof AppError && error.details[0]) throw badFilter(error.details[0].message);
      throw error;
    }
    const matching = new Set(extras ? await conversationIdsWhere(datasetId, extras) : ids);
    ids = ids.filter((id) => matching.has(id));
    if (ids.length === 0) {
      const among = body.conversation_ids ? "none of the conversation_ids" : `no conversation of dataset ${datasetId}`;
      throw new AppError("unprocessable", `The filter matches ${among}: nothing to generate from`, [{ path: "filter", message: `matches ${among}` }]);
    }
  }
  if (ids.length === 0) throw new AppError("unprocessable", `Dataset ${datasetId} has no conversations to generate from`, [{ path: "source_dataset_id", message: "has no conversations" }]);
  return ids;
}
