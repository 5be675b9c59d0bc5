/** Tools that find and read: datasets, conversations, a conversation, metrics, metric templates (all `viewer`). */
import { z } from "zod";
import { getConversation, listConversations, listDatasets } from "@/lib/datasets";
import { AppError } from "@/lib/errors";
import { listMetrics } from "@/lib/metrics/metrics";
import { listTemplates } from "@/lib/metrics/templates";
import { getGridPage } from "@/lib/results/grid";
import { bodyId } from "@/lib/schemas/common";
import { gridQuery } from "@/lib/schemas/executions";
import { evaluationLevels } from "@/lib/vocabulary";
import { clip, clipJson, dropEmpty, paging, verdict } from "./compact";
import { defineTool, maxCharsArg, pageArgs, parseArgs } from "./define";
import { transcriptUri } from "./resources";

const nameArg = z.string().trim().min(1).max(200);

export const listDatasetsTool = defineTool({
  name: "list_datasets",
  title: "Find datasets",
  description: "Datasets, newest first, optionally those whose name contains `name` (any case). Each with its id and conversation, message and step counts.",
  role: "viewer",
  readOnly: true,
  input: z.object({ name: nameArg.optional().describe("Part of the dataset's name, any case"), ...pageArgs(20, 100) }),
  run: async ({ name, limit, offset }) => {
    const { items, total } = await listDatasets({ name, limit, offset });
    return {
      datasets: items.map((d) =>
        dropEmpty({ id: d.id, name: d.name, description: clip(d.description, 200), conversations: d.conversation_count, messages: d.message_count, steps: d.step_count, created_at: d.created_at }),
      ),
      ...paging(total, offset, items.length),
    };
  },
});

export const searchConversationsTool = defineTool({
  name: "search_conversations",
  title: "Find conversations",
  description:
    "A dataset's conversations in position order: all, those whose name contains `name`, or those matching `filter` in the grid's language " +
    "(`;`-separated conditions `<field><op><value>`, ops == != >= > <= <; `meta.<key>` compares the conversation's meta, `metric.<id>` a " +
    "conversation-level metric's latest score, or with ==/!= its verdict pass, fail, failed or none; e.g. `meta.reward==0;metric.12==fail`). " +
    "`sort` orders by `meta.<key>` or `metric.<id>` (leading - for descending). Rows found by filter or sort carry each conversation-level " +
    "metric's latest verdict by metric id. Read one with get_conversation or the resource in transcript_uri.",
  role: "viewer",
  readOnly: true,
  input: z.object({
    dataset_id: bodyId,
    name: nameArg.optional().describe("Part of the conversation's name, any case (not with filter or sort)"),
    filter: z.string().max(2000).optional().describe("Grid filter, e.g. meta.reward==0;metric.12==fail"),
    sort: z.string().max(300).optional().describe("meta.<key> or metric.<id>, - first for descending"),
    meta: z.string().max(2000).optional().describe("Comma-separated meta keys (dotted for nested) to return on each row, e.g. reward,task.kind"),
    ...pageArgs(20, 200),
  }),
  run: async ({ dataset_id, name, filter, sort, meta, limit, offset }) => {
    if (name !== undefined && (filter !== undefined || sort !== undefined || meta !== undefined)) {
      throw new AppError("bad_request", "Invalid arguments (name: give name, or filter/sort/meta, not both)", [{ path: "name", message: "cannot be combined with filter, sort or meta" }]);
    }
    if (filter === undefined && sort === undefined && meta === undefined) {
      const { items, total } = await listConversations(dataset_id, { limit, offset, name });
      return {
        conversations: items.map((c) => ({ id: c.id, label: c.label, position: c.position, messages: c.message_count, steps: c.step_count })),
        ...paging(total, offset, items.length),
      };
    }
    // The grid's own query, as GET /datasets/{id}/grid reads it (its messages and 422s included).
    const q = parseArgs(gridQuery, dropEmpty({ level: "conversation", filter, sort, meta, limit: String(limit), offset: String(offset) }), "arguments");
    const { items, total } = await getGridPage(dataset_id, q);
    return {
      conversations: items.map((row) =>
        dropEmpty({
          id: row.entity_id,
          label: row.label,
          position: row.position,
          meta: row.meta,
          verdicts: Object.fromEntries(Object.entries(row.cells).map(([nodeId, cell]) => [nodeId, cell.status === "completed" ? verdict(cell.result, 80).value : cell.status])),
        }),
      ),
      ...paging(total, offset, items.length),
    };
  },
});

export const getConversationTool = defineTool({
  name: "get_conversation",
  title: "Read a conversation",
  description:
    "One conversation: its label, meta, goal and a page of its messages, each with its steps (thinking, tool calls and results, output), long texts clipped. " +
    "The whole transcript as text is the resource in transcript_uri.",
  role: "viewer",
  readOnly: true,
  input: z.object({
    id: bodyId.describe("Conversation id"),
    message_offset: z.number().int().min(0).default(0).describe("Messages to skip: the previous page's next_message_offset"),
    message_limit: z.number().int().min(1).max(200).default(30).describe("Messages per page (default 30)"),
    max_chars: maxCharsArg,
  }),
  run: async ({ id, message_offset, message_limit, max_chars }) => {
    const c = await getConversation(id);
    const page = c.messages.slice(message_offset, message_offset + message_limit);
    const { next_offset } = paging(c.messages.length, message_offset, page.length);
    return dropEmpty({
      id: c.id,
      dataset_id: c.dataset_id,
      label: c.label,
      description: clip(c.description, max_chars),
      meta: clipJson(c.meta, max_chars),
      goal: clip(c.goal, max_chars),
      agents: clipJson(c.agents, max_chars),
      message_count: c.message_count,
      step_count: c.step_count,
      transcript_uri: transcriptUri(c.id),
      messages: page.map((m) =>
        dropEmpty({
          id: m.id,
          position: m.position,
          role: m.role,
          content: clip(m.content, max_chars),
          meta: clipJson(m.meta, max_chars),
          steps: m.steps.map((s) =>
            dropEmpty({
              id: s.id,
              agent: s.agent_name,
              thinking: clip(s.thinking, max_chars),
              tool_call: clipJson(s.tool_call, max_chars),
              tool_result: clipJson(s.tool_result, max_chars),
              output: clip(s.output_content, max_chars),
              output_structured: clipJson(s.output_structured, max_chars),
            }),
          ),
        }),
      ),
      next_message_offset: next_offset,
    });
  },
});

export const listMetricsTool = defineTool({
  name: "list_metrics",
  title: "List a dataset's metrics",
  description: "The metrics (the grid's columns) of a dataset, in column order: id, name, level, output type, judge model or check. Run them with estimate_run / start_run.",
  role: "viewer",
  readOnly: true,
  input: z.object({ dataset_id: bodyId, include_prompt: z.boolean().default(false).describe("Also return each metric's prompt (long)") }),
  run: async ({ dataset_id, include_prompt }) => {
    const metrics = await listMetrics(dataset_id);
    return {
      metrics: metrics.map((m) =>
        dropEmpty({
          id: m.id,
          name: m.name,
          description: clip(m.description, 200),
          level: m.evaluation_level,
          output_type: m.output_type,
          kind: m.kind,
          check: m.check,
          model_name: m.model_name,
          template_id: m.template_id,
          depends_on: m.depends_on,
          prompt: include_prompt ? m.prompt : undefined,
        }),
      ),
    };
  },
});

export const listTemplatesTool = defineTool({
  name: "list_metric_templates",
  title: "List metric templates",
  description: "Metric templates (the system's and your own) to start a metric from, optionally of one level or category.",
  role: "viewer",
  readOnly: true,
  input: z.object({
    evaluation_level: z.enum(evaluationLevels).optional(),
    category: z.string().trim().min(1).max(100).optional().describe("Exact category"),
    ...pageArgs(50, 200),
  }),
  run: async ({ evaluation_level, category, limit, offset }, { caller }) => {
    const all = await listTemplates({ userId: caller.userId, evaluationLevel: evaluation_level, category });
    const page = all.slice(offset, offset + limit);
    return {
      templates: page.map((t) =>
        dropEmpty({ id: t.id, name: t.name, description: clip(t.description, 200), level: t.evaluation_level, output_type: t.output_type, kind: t.kind, category: t.category, system: t.is_system }),
      ),
      ...paging(all.length, offset, page.length),
    };
  },
});
