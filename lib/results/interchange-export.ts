/**
 * Conversations out in the formats other tools read: one conversation as an ATIF trajectory, a dataset (or the
 * conversations a grid filter keeps) as JSON Lines of ATIF trajectories or of OpenAI chat records. The dataset
 * files are streamed a page of conversations at a time, pulled as fast as the client reads.
 */
import "server-only";
import { conversationIdsWhere } from "@/db/repositories/grid";
import { assertDatasetExists, getConversation, getConversations } from "@/lib/datasets";
import { AppError } from "@/lib/errors";
import type { Conversation } from "@/lib/schemas/datasets";
import { conversationToAtif } from "./atif";
import { textStream } from "./byte-stream";
import type { ExportFile } from "./export";
import { parseGridExtras } from "./grid";
import { conversationToOpenAiChat } from "./openai-chat";

export type InterchangeFormat = "atif" | "openai_jsonl";

const PAGE = 100;
const JSONL = "application/x-ndjson; charset=utf-8";

const writers: Record<InterchangeFormat, (c: Conversation) => unknown> = { atif: conversationToAtif, openai_jsonl: conversationToOpenAiChat };

/** One conversation as an ATIF trajectory (404 AppError if unknown). */
export async function exportConversationAtif(id: number): Promise<ExportFile> {
  const trajectory = conversationToAtif(await getConversation(id));
  return {
    body: textStream([JSON.stringify(trajectory)][Symbol.iterator]()),
    contentType: "application/json; charset=utf-8",
    filename: `conversation-${id}.atif.json`,
  };
}

async function* lines(ids: number[], write: (c: Conversation) => unknown): AsyncGenerator<string> {
  for (let i = 0; i < ids.length; i += PAGE) {
    const page = await getConversations(ids.slice(i, i + PAGE));
    yield page.map((c) => `${JSON.stringify(write(c))}\n`).join("");
  }
}

/**
 * A dataset's conversations, in grid order, as JSON Lines of the format: all of them, or those matching `filter`
 * (the grid's filter language at the conversation level). 404 for an unknown dataset, 422 for a filter the grid refuses.
 */
export async function exportDatasetInterchange(datasetId: number, format: InterchangeFormat, filter?: string): Promise<ExportFile> {
  await assertDatasetExists(datasetId);
  const extras = filter ? await parseGridExtras(datasetId, { level: "conversation", filter, limit: 1, offset: 0 }) : undefined;
  // The ids only (a few bytes each): the conversations themselves are read a page at a time while streaming.
  const ids = await conversationIdsWhere(datasetId, extras ?? { metaPaths: [], conditions: [] });
  const name = format === "atif" ? "atif.jsonl" : "openai.jsonl";
  return { body: textStream(lines(ids, writers[format])), contentType: JSONL, filename: `dataset-${datasetId}${filter ? "-filtered" : ""}.${name}` };
}

/** 422 for a `filter` sent with a format that does not take one. */
export function refuseFilter(format: string): never {
  throw new AppError("unprocessable", `Invalid query parameter filter: ${format} exports the whole grid; filter is for atif and openai_jsonl`, [
    { path: "filter", message: "is for format=atif and format=openai_jsonl" },
  ]);
}
