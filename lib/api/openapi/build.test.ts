import { describe, expect, it } from "vitest";
import { z } from "zod";
import { buildOpenApiDocument } from "./build";

function refsOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsOf(item, out);
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string") out.push(item);
      else refsOf(item, out);
    }
  }
  return out;
}

describe("the OpenAPI document", () => {
  it("builds when a second copy of the schemas has registered the same ids (the server bundles lib/schemas more than once)", () => {
    // What a second chunk's copy of lib/schemas/datasets.ts does at load: the API reference page answered 500 after it.
    z.object({ id: z.number(), name: z.string() }).meta({ id: "Dataset" });
    const doc = buildOpenApiDocument({ version: "test" }) as { components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };
    expect(doc.components.schemas.Dataset?.properties).toHaveProperty("conversation_count");
  });

  it("every $ref points at a component it defines", () => {
    const doc = buildOpenApiDocument({ version: "test" }) as { components: { schemas: Record<string, unknown> } };
    const refs = new Set(refsOf(doc));
    expect(refs.size).toBeGreaterThan(20);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas, ref).toHaveProperty([ref.slice("#/components/schemas/".length)]);
    }
    expect(doc.components.schemas).toHaveProperty("SourceComparison");
  });
});
