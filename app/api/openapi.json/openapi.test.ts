import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { GET } from "./route";

describe("GET /api/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document listing the datasets endpoints", async () => {
    const res = await call(GET, "GET", "/api/openapi.json");
    expect(res.status).toBe(200);
    const doc = res.json;
    expect(doc.openapi).toBe("3.1.0");
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);

    expect(Object.keys(doc.paths["/datasets"]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/datasets/{id}"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(doc.paths["/datasets/{id}/conversations"].get).toBeDefined();
    expect(doc.paths["/conversations/{id}"].get).toBeDefined();
    expect(Object.keys(doc.paths["/labels"]).sort()).toEqual(["get", "post"]);
    expect(doc.paths["/labels/{id}"].delete).toBeDefined();
    expect(doc.paths["/agreement"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Agreement" });
    expect(Object.keys(doc.components.schemas.Label.properties)).toContain("superseded_at");
    expect(doc.components.schemas.Metric.properties.reference).toBeDefined();
    // pair_by=cell answers an ExecutionComparison, pair_by=source a SourceComparison: both documented.
    expect(doc.paths["/evaluation-pipeline-executions/compare"].get.responses["200"].content["application/json"].schema).toEqual({
      anyOf: [{ $ref: "#/components/schemas/ExecutionComparison" }, { $ref: "#/components/schemas/SourceComparison" }],
    });
    expect(doc.paths["/evaluation-pipeline-nodes/{id}/versions"].get).toBeDefined();
    expect(doc.paths["/datasets/{id}/meta-fields"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/MetaFields" });
    expect(doc.paths["/evaluation-pipeline-nodes/{id}/reference-preview"].post.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/ReferencePreview",
    });
    expect(doc.paths["/datasets/{id}/grid"].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["meta", "sort", "filter"]));
  });

  it("is generated from the route schemas: integers, required fields and the Dataset shape", async () => {
    const doc = (await call(GET, "GET", "/api/openapi.json")).json;
    const list = doc.paths["/datasets"].get;
    const limit = list.parameters.find((p: { name: string }) => p.name === "limit");
    expect(limit).toMatchObject({ in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 500 } });
    expect(list.responses["200"].headers["X-Total-Count"]).toBeDefined();
    const idParam = doc.paths["/datasets/{id}"].get.parameters[0];
    expect(idParam).toMatchObject({ name: "id", in: "path", required: true, schema: { type: "integer", minimum: 1 } });
    const create = doc.paths["/datasets"].post.requestBody.content["application/json"].schema;
    expect(create.required).toEqual(["name"]);
    expect(create.properties.name).toMatchObject({ type: "string", minLength: 1 });
    const dataset = doc.components.schemas.Dataset;
    expect(Object.keys(dataset.properties).sort()).toEqual(
      ["conversation_count", "created_at", "description", "id", "message_count", "name", "step_count", "updated_at", "user_id"],
    );
    expect(doc.paths["/datasets"].post.responses["201"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/Dataset",
    });
    expect(doc.components.schemas.Error).toBeDefined();
  });
});

describe("the OTLP trace receiver in the OpenAPI document", () => {
  it("documents both encodings, the export response, the bad-body statuses, the decode deadline (422) and a busy store (503)", async () => {
    const doc = (await call(GET, "GET", "/api/openapi.json")).json;
    const op = doc.paths["/otel/v1/traces"].post;
    expect(Object.keys(op.requestBody.content).sort()).toEqual(["application/json", "application/x-protobuf"]);
    expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "413", "415", "422", "503"]);
    expect(op.responses["200"].content["application/json"].schema.properties.partialSuccess).toBeDefined();
  });
});
