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
    expect(grid.parameters?.map((p) => p.name)).toEqual(["id", "level", "conversation_id", "meta", "sort", "filter", "limit", "offset", "cursor"]);
    expect(grid.responses["200"].headers?.["X-Total-Count"]).toBeDefined();
    expect(grid.responses["200"].headers?.["X-Total-Count-Kind"]).toMatchObject({ schema: { enum: ["exact", "estimated"] } });
    expect(grid.responses["200"].headers?.["X-Next-Cursor"]).toBeDefined();
  });

  it("documents the grid export: three media types and JSON Lines of conversations, its file name and its columns", () => {
    const doc = buildOpenApiDocument({ version: "test" }) as {
      paths: Record<string, Record<string, { description?: string; parameters?: Array<{ name: string; required: boolean }>; responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    const exp = doc.paths["/datasets/{id}/export"].get;
    expect(Object.keys(exp.responses["200"].content ?? {}).sort()).toEqual([
      "application/json",
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      "application/x-ndjson",
      "text/csv",
    ]);
    expect(exp.parameters?.map((p) => [p.name, p.required])).toEqual([
      ["id", true],
      ["format", true],
      ["bom", false],
      ["filter", false],
    ]);
    expect(Object.keys(exp.responses)).toEqual(["200", "400", "404", "422"]);
    expect(exp.description).toContain("`format=atif` and `format=openai_jsonl`");
    expect(exp.description).toContain("meta.<key>");
    expect(exp.description).toContain("entity_type, entity_id, conversation_id");
  });

  it("documents one conversation's ATIF export", () => {
    const doc = buildOpenApiDocument({ version: "test" }) as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; required: boolean }>; responses: Record<string, { content?: Record<string, { schema: { required?: string[] } }> }> }>>;
    };
    const exp = doc.paths["/conversations/{id}/export"].get;
    expect(exp.parameters?.map((p) => [p.name, p.required])).toEqual([
      ["id", true],
      ["format", false],
    ]);
    expect(exp.responses["200"].content?.["application/json"].schema.required).toEqual(["schema_version", "session_id", "agent", "steps"]);
    expect(Object.keys(exp.responses)).toEqual(["200", "400", "404"]);
  });
});

