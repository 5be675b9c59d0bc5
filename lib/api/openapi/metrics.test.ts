import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { version } from "@/lib/version";
import { buildOpenApiDocument } from "./build";

describe("OpenAPI: metric templates and metrics", () => {
  it("documents every endpoint and stays a valid OpenAPI 3.1 document", async () => {
    const doc = buildOpenApiDocument({ version }) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown>; required?: string[] } }> } }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(Object.keys(doc.paths["/metric-templates"]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/metric-templates/{id}"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(Object.keys(doc.paths["/evaluation-pipeline-nodes"]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/evaluation-pipeline-nodes/{id}"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(Object.keys(doc.paths["/evaluation-pipeline-nodes/preview"])).toEqual(["post"]);
    expect(Object.keys(doc.paths["/metric-templates/{id}"].patch.responses).sort()).toEqual(["200", "400", "403", "404", "413", "422"]);
    expect(Object.keys(doc.components.schemas.Metric.properties)).toContain("template_variables");
    expect(Object.keys(doc.components.schemas.MetricTemplate.properties)).toContain("is_system");
    const createMetric = doc.paths["/evaluation-pipeline-nodes"].post.requestBody!.content["application/json"].schema;
    expect(createMetric.required).toEqual(["dataset_id"]);
    expect(Object.keys(createMetric.properties)).not.toContain("template_variables");
  });
});
