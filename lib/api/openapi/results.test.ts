import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "./build";

describe("OpenAPI: results, export and grid", () => {
  it("documents the three endpoints, the export's three media types and the grid's paging header", () => {
    const doc = buildOpenApiDocument({ version: "test" }) as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; required: boolean }>; responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }> }>>;
    };
    const results = doc.paths["/evaluation-pipeline-executions/{id}/results"].get;
    expect(results.responses["200"].content?.["application/json"]).toEqual({ schema: { $ref: "#/components/schemas/ExecutionResults" } });
    const exp = doc.paths["/evaluation-pipeline-executions/{id}/export"].get;
    expect(Object.keys(exp.responses["200"].content ?? {}).sort()).toEqual([
      "application/json",
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      "text/csv",
    ]);
    expect(exp.parameters?.find((p) => p.name === "format")).toMatchObject({ required: true });
    expect(Object.keys(exp.responses)).toEqual(["200", "400", "404"]);
    const grid = doc.paths["/datasets/{id}/grid"].get;
    expect(grid.parameters?.map((p) => p.name)).toEqual(["id", "level", "conversation_id", "limit", "offset"]);
    expect(grid.responses["200"].headers?.["X-Total-Count"]).toBeDefined();
  });
});
