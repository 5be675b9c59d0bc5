import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { GET } from "@/app/api/openapi.json/route";

describe("OpenAPI: import operations", () => {
  it("documents both import endpoints as multipart, with the import shapes and the detected format", async () => {
    const doc = (await call(GET, "GET", "/api/openapi.json")).json;
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);

    const into = doc.paths["/datasets/{id}/import"].post;
    const body = into.requestBody.content["multipart/form-data"].schema;
    expect(body.required).toEqual(["file"]);
    expect(body.properties.file).toMatchObject({ type: "string", format: "binary" });
    expect(Object.keys(into.responses).sort()).toEqual(["200", "400", "404", "413", "415", "422"]);
    expect(into.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ImportSuccess" });

    const create = doc.paths["/datasets/import"].post;
    expect(create.requestBody.content["multipart/form-data"].schema.required.sort()).toEqual(["file", "name"]);
    // 422 is the import shape for a refused file, or the generic error shape for a reused Idempotency-Key.
    expect(create.responses["422"].content["application/json"].schema).toEqual({
      oneOf: [{ $ref: "#/components/schemas/ImportFailure" }, { $ref: "#/components/schemas/Error" }],
    });

    const success = doc.components.schemas.ImportSuccess;
    expect(success.properties.format.enum).toEqual([
      "turnscope", "openai_chat", "jsonl", "sharegpt", "anthropic_messages", "content_parts", "records", "csv",
      "coding_agent_session", "message_tree", "swe_agent_trajectory", "agent_events", "eval_log", "codex_rollout", "tau2_results", "smolagents_run", "smolagents_memory", "langsmith_runs", "aider_history", "ai_sdk_ui_messages", "openai_responses", "gemini_contents", "atif", "joined_files", "mapping",
    ]);
    expect(success.required).toContain("not_imported");
    expect(success.required).toContain("records");
    expect(doc.components.schemas.ImportRecords.required.sort()).toEqual(["explanation", "in_file", "skipped"]);
    for (const op of [into, create]) expect(op.requestBody.content["multipart/form-data"].schema.properties.join_key.description).toContain("question_id");
    expect(doc.components.schemas.NotImported.required.sort()).toEqual(["characters", "path"]);
    expect(doc.components.schemas.NotImported.properties.reason.description).toContain("re-serialised: 25.00 stored as 25");
    for (const op of [into, create]) {
      expect(op.parameters).toContainEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header", required: false }));
      expect(op.responses["422"].description).toContain("`Idempotency-Key` already used");
    }
    expect(doc.components.schemas.LlmFeedback.properties.generated_by).toBeDefined();
    expect(doc.components.schemas.SuggestedTransformation.required.sort()).toEqual(["from", "mapping", "to"]);
  });
});
