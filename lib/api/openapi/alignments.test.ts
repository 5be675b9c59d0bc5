/** The alignment endpoints as the OpenAPI document shows them: every route, its answers and its shapes. */
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "./build";

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>; components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };

describe("OpenAPI: alignment", () => {
  const doc = buildOpenApiDocument({ version: "test" }) as Doc;

  it("documents starting, reading, listing, cancelling and promoting an alignment, and the agreement history", () => {
    expect(Object.keys(doc.paths["/alignments"].post.responses)).toEqual(expect.arrayContaining(["200", "202", "400", "404", "422"]));
    expect(doc.paths["/alignments"].get).toBeDefined();
    expect(doc.paths["/alignments/{id}"].get).toBeDefined();
    expect(Object.keys(doc.paths["/alignments/{id}/promote"].post.responses)).toContain("409");
    expect(Object.keys(doc.paths["/alignments/{id}/cancel"].post.responses)).toEqual(expect.arrayContaining(["200", "404", "409"]));
    expect(doc.paths["/evaluation-pipeline-nodes/{id}/agreement-history"].get).toBeDefined();
  });

  it("gives the alignment's figures: baseline and candidates with held-out κ, TPR, TNR, Δκ and the recommendation", () => {
    const alignment = doc.components.schemas.Alignment.properties!;
    for (const key of ["truth_n", "annotator_kappa", "baseline", "candidates", "recommended", "usage", "folds_detail", "warnings"]) expect(alignment).toHaveProperty(key);
    expect(doc.components.schemas).toHaveProperty("AlignmentEstimate");
    expect(doc.components.schemas).toHaveProperty("AlignmentPromotion");
    expect(doc.components.schemas).toHaveProperty("AgreementHistory");
  });
});
