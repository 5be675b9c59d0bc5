import { errorSchema, idParams } from "@/lib/schemas/common";
import { z } from "zod";
import { createGenerationBody, evaluateGenerationBody, generationEstimateSchema, generationSchema, listGenerationsQuery } from "@/lib/schemas/generations";
import { executionSchema } from "@/lib/schemas/executions";
import { createTargetBody, targetSchema, updateTargetBody } from "@/lib/schemas/targets";
import { badRequest, forbiddenResponse, notFoundResponse, totalCountHeader, unprocessableResponse } from "./shared";
import type { Operation } from "./types";

const tag = "Targets and generations";
const noContentResponse = { description: "Deleted" };

const generationDescription =
  "Sends a dataset's conversations (all of them, those in `conversation_ids`, those matching `filter` — the grid's filter " +
  "language at the conversation level — or, with both, the named ones that match; resolved once, at creation) to a target, each result an ordinary conversation of a new " +
  "dataset (`dataset_id`) with `meta.source_conversation_id`, `repeat` (0…k−1), `generation_id`, `target` and `stop_reason`, so " +
  "every metric, check, label and export works on it. `next_turn`: for each assistant turn the history before it is sent and " +
  "the candidate stored in its place, the original in the message's `meta.original_content`. `replay`: the source's user turns " +
  "are sent one after another; `meta.diverged_at` is the first assistant turn whose tool calls differ from the source's. " +
  "`simulate`: a model (`simulator.model`, default JUDGE_MODEL through OPENAI_BASE_URL) plays the user from the scenario at " +
  "`simulator.scenario_path` (else the conversation's goal, else its first user message) until it says `stop_token` or " +
  "`max_turns`; its instructions are in the generation's `params`. A target's error, time-out or empty reply ends that " +
  "conversation with `stop_reason: target_error` (counted in `failed`, never a pass); a simulator's with `simulator_error`. " +
  "Queued: any server or worker process claims it (a lease it renews; one whose process died is taken up by another where it " +
  "was), the target's `max_concurrency` (or `batch_size`) conversations at once; `max_cost_usd` " +
  "is checked before every call to the target and the simulator, so no call starts once their calls cost that much (JUDGE_PRICES) " +
  "and the spend ends within the calls in flight; the generation ends `cancelled` with `stop_reason: budget`, and a budget a " +
  "model without a price would make unkeepable is refused with 422. A filter the grid cannot read, or one that matches none of the chosen conversations, is refused with 422 naming " +
  "`filter`. `dry_run`: 200 with the target's and the simulator's calls, their tokens counted from what each call would carry (the " +
  "whole history, system prompt, tool definitions, the simulator's instructions), the replies as long as the source's " +
  "(`estimated_cost_usd`) and as its longest (`estimated_cost_usd_high`), and their cost priced with JUDGE_PRICES (null, said in `notes`, where a model has no price); nothing is created and nothing is sent.";

export const generationOperations: Operation[] = [
  {
    method: "post",
    path: "/targets",
    operationId: "createTarget",
    summary: "Add an agent or model to test: openai_chat, http_json or ai_sdk_ui",
    description:
      "Header values may be `${env:NAME}` for names an admin listed in TARGET_SECRET_ENV (any other name: 422), read from the server's environment when a request is sent; no header value is ever shown again (`header_names` only). " +
      "A url whose host is a refused address (TARGET_DENY_NETWORKS: link-local, cloud metadata, unspecified) or a metadata name is refused with 422; names are checked again on the address connected. " +
      "Redirects are followed within the target's origin only; a reply past TARGET_MAX_REPLY_BYTES or timeout_ms fails the conversation naming the limit (docs/generations.md).",
    tag,
    body: createTargetBody,
    responses: { 201: { description: "The target", schema: targetSchema }, 400: badRequest, 422: unprocessableResponse },
  },
  { method: "get", path: "/targets", operationId: "listTargets", summary: "Every target (a url's credentials — user, password, query values — shown as *** except to admins)", tag, responses: { 200: { description: "The targets, oldest first", schema: targetSchema, array: true } } },
  { method: "get", path: "/targets/{id}", operationId: "getTarget", summary: "One target", tag, params: idParams, responses: { 200: { description: "The target", schema: targetSchema }, 400: badRequest, 404: notFoundResponse } },
  {
    method: "patch",
    path: "/targets/{id}",
    operationId: "updateTarget",
    summary: "Change a target (checked as a whole, as a new one is; its owner or an admin only)",
    description: "Only the target's owner (`user_id`) or an admin may change it (403 otherwise). A new `url` drops the stored headers unless `headers` is given again.",
    tag,
    params: idParams,
    body: updateTargetBody,
    responses: { 200: { description: "The target", schema: targetSchema }, 400: badRequest, 403: forbiddenResponse, 404: notFoundResponse, 422: unprocessableResponse },
  },
  { method: "delete", path: "/targets/{id}", operationId: "deleteTarget", summary: "Delete a target (its owner or an admin only; its generations keep their datasets)", tag, params: idParams, responses: { 204: noContentResponse, 400: badRequest, 403: forbiddenResponse, 404: notFoundResponse } },
  {
    method: "post",
    path: "/generations",
    operationId: "createGeneration",
    summary: "Replay or simulate a dataset's conversations against a target",
    description: generationDescription,
    tag,
    body: createGenerationBody,
    responses: {
      202: { description: "Started", schema: generationSchema },
      200: { description: "dry_run: what it would send", schema: generationEstimateSchema },
      400: badRequest,
      404: notFoundResponse,
      422: unprocessableResponse,
    },
  },
  {
    method: "get",
    path: "/generations",
    operationId: "listGenerations",
    summary: "Generations, newest first: all, or those made from one source dataset",
    tag,
    query: listGenerationsQuery,
    responses: { 200: { description: "A page of generations", schema: generationSchema, array: true, headers: totalCountHeader }, 400: badRequest },
  },
  { method: "get", path: "/generations/{id}", operationId: "getGeneration", summary: "A generation's status, counts, usage and stop reasons", tag, params: idParams, responses: { 200: { description: "The generation", schema: generationSchema }, 400: badRequest, 404: notFoundResponse } },
  {
    method: "get",
    path: "/generations/{id}/events",
    operationId: "followGeneration",
    summary: "Follow a generation (Server-Sent Events)",
    description: "`processing` with its status, counts and `stop_reasons` first and whenever they change, one `conversation` event per conversation written (`conversation_id`, `source_conversation_id`, `repeat`, `stop_reason`), then `done` with the generation. Read from the store as the generation changes, whichever process works it; a reconnect starts again from the first conversation.",
    tag,
    params: idParams,
    responses: { 200: { description: "text/event-stream", contentType: "text/event-stream" }, 400: badRequest, 404: notFoundResponse },
  },
  {
    method: "post",
    path: "/generations/{id}/cancel",
    operationId: "cancelGeneration",
    summary: "Cancel a generation wherever it runs: it ends `cancelled` at once, its calls are aborted, nothing more is written",
    tag,
    params: idParams,
    responses: { 200: { description: "The generation, cancelled", schema: generationSchema }, 400: badRequest, 404: notFoundResponse, 409: { description: "Already ended", schema: errorSchema } },
  },
  {
    method: "post",
    path: "/generations/{id}/evaluate",
    operationId: "evaluateGenerationWithSource",
    summary: "Evaluate and compare with the source: run the chosen source metrics on both datasets",
    description:
      "Each metric of `pipeline_node_ids` (metrics of the source dataset) is copied by name to the generated dataset where it has no metric of " +
      "that name, together with the metrics it depends on (listed before it in `metrics`; a copy depends on the copies, with the same skip rule), " +
      "then two runs start: those source metrics on the source (unless a finished run of them over the source exists: `source_reused`), their copies on the generated " +
      "dataset. `compare_url` is the page comparing them paired by source conversation (`GET /evaluation-pipeline-executions/compare?a&b&pair_by=source`). " +
      "409 while the generation runs.",
    tag,
    params: idParams,
    body: evaluateGenerationBody,
    responses: {
      202: {
        description: "Both runs started",
        schema: z
          .object({
            source_execution: executionSchema,
            generated_execution: executionSchema,
            source_reused: z.boolean().describe("The source run is a finished run of these metrics over the source (made after each metric last changed, no failed cell): read again, not judged again"),
            compare_url: z.string(),
            metrics: z.array(z.object({ name: z.string(), source_id: z.number().int(), generated_id: z.number().int() })),
          })
          .meta({ id: "GenerationEvaluation" }),
      },
      400: badRequest,
      404: notFoundResponse,
      409: { description: "The generation has not ended", schema: errorSchema },
      422: unprocessableResponse,
    },
  },
];
