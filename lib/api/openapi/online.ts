import { idParams } from "@/lib/schemas/common";
import { createRuleBody, listRulesQuery, liveQuery, liveSchema, onlineRuleSchema, updateRuleBody } from "@/lib/schemas/online";
import { badRequest, notFoundResponse, unprocessableResponse } from "./shared";
import type { Operation } from "./types";

const tag = "Online rules";

const ruleDescription =
  "A live conversation (received as OpenTelemetry spans) with no new span for `idle_seconds` counts as finished. Each server " +
  "sweeps the enabled rules every ONLINE_SWEEP_INTERVAL_MS: every finished conversation is taken once per rule and revision " +
  "(across processes), `sample_rate` of them — decided by a hash of rule and conversation, so a sweep never re-rolls — that " +
  "match `filter` are evaluated with `pipeline_node_ids` by an ordinary run (`meta.trigger: \"rule:<id>\"`, on PostgreSQL " +
  "through the queue). A conversation that grows later (a new revision) is taken again. A rule has one run going at a time; " +
  "with `max_cost_usd_per_day` each run's `max_cost_usd` is what is left of the day's cap (UTC), and no run starts once it is spent.";

export const onlineOperations: Operation[] = [
  {
    method: "post",
    path: "/online-rules",
    operationId: "createOnlineRule",
    summary: "Judge a dataset's live conversations as they finish",
    description: `${ruleDescription} 404 for an unknown dataset; 422 for a metric of another dataset or a filter naming one, and for a \`max_cost_usd_per_day\` over a judge metric whose model has no price in JUDGE_PRICES (the cap could never be reached).`,
    tag,
    body: createRuleBody,
    responses: { 201: { description: "The rule", schema: onlineRuleSchema }, 400: badRequest, 404: notFoundResponse, 422: unprocessableResponse },
  },
  {
    method: "get",
    path: "/online-rules",
    operationId: "listOnlineRules",
    summary: "Every online rule, or a dataset's",
    tag,
    query: listRulesQuery,
    responses: { 200: { description: "The rules, oldest first", schema: onlineRuleSchema, array: true }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "get",
    path: "/online-rules/{id}",
    operationId: "getOnlineRule",
    summary: "One online rule with today's spend, conversations evaluated and its last error",
    tag,
    params: idParams,
    responses: { 200: { description: "The rule", schema: onlineRuleSchema }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "patch",
    path: "/online-rules/{id}",
    operationId: "updateOnlineRule",
    summary: "Change an online rule",
    description: "Conversations the rule already took stay taken; the new settings apply to those that finish from now on.",
    tag,
    params: idParams,
    body: updateRuleBody,
    responses: { 200: { description: "The rule", schema: onlineRuleSchema }, 400: badRequest, 404: notFoundResponse, 422: unprocessableResponse },
  },
  {
    method: "delete",
    path: "/online-rules/{id}",
    operationId: "deleteOnlineRule",
    summary: "Delete an online rule",
    description: "The runs it started and their results stay.",
    tag,
    params: idParams,
    responses: { 204: { description: "Deleted" }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "get",
    path: "/datasets/{id}/live",
    operationId: "getLiveDataset",
    summary: "What the Live page shows: live conversations arriving, scores over time, rules, last failures",
    description: "Scores are the mean of completed results per metric per hour or day (UTC, by when the result was saved) over the last `days`.",
    tag,
    params: idParams,
    query: liveQuery,
    responses: { 200: { description: "The dataset's live view", schema: liveSchema }, 400: badRequest, 404: notFoundResponse },
  },
];
