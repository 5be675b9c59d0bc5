/**
 * Issue 51: labels made before any key belong to "default" (the open server's user), a name no person on
 * the People page has, and annotator agreement counts them as one more annotator. The answer says what
 * each name is — a person, the labels made before any key, or a name with no person — and the People
 * page's list of label authors (lib/labels/authors.ts) names the ones that are no person.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as labels from "@/app/api/labels/route";
import * as users from "@/app/api/users/route";
import { listLabelAuthors } from "@/lib/labels/authors";
import * as annotators from "./route";

let datasetId: number;
let metricId: number;
let conversationIds: number[];

beforeAll(async () => {
  const file = JSON.stringify({ conversations: Array.from({ length: 4 }, (_, i) => ({ name: `task ${i}`, messages: [{ role: "user", content: `q ${i}` }, { role: "assistant", content: `a ${i}` }] })) });
  const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "default labels" } });
  expect(imported.status, imported.text).toBe(201);
  datasetId = imported.json.dataset_id ?? imported.json.dataset.id;
  conversationIds = (await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } })).json.map((c: { id: number }) => c.id);
  const metric = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
    body: { dataset_id: datasetId, name: "Solved", evaluation_level: "conversation", prompt: "Solved? @HISTORY", output_type: "checkbox" },
  });
  expect(metric.status, metric.text).toBe(201);
  metricId = metric.json.id;
  // A person of the team (no key yet: the server stays open).
  expect((await call(users.POST, "POST", "/api/users", { body: { name: "ana", role: "annotator" } })).status).toBe(201);
});

const label = (cell: number, value: boolean, user?: string) =>
  call(labels.POST, "POST", "/api/labels", {
    ...(user ? { headers: { "x-user-id": user } } : {}),
    body: { dataset_id: datasetId, pipeline_node_id: metricId, entity_type: "conversation", entity_id: conversationIds[cell], value },
  });

describe("labels made before any key", () => {
  it("are 'default', said to be made before any key, and counted in κ as an annotator of their own", async () => {
    for (const [cell, value] of [[0, true], [1, true], [2, false], [3, false]] as const) {
      expect((await label(cell, value)).status).toBe(201);
      expect((await label(cell, value, "ana")).status).toBe(201);
      expect((await label(cell, !value, "cy")).status).toBe(201);
    }
    const res = await call(annotators.GET, "GET", `/api/agreement/annotators?dataset_id=${datasetId}&pipeline_node_id=${metricId}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.annotators).toEqual([
      { user_id: "ana", labelled: 4, notes_only: 0, who: "person" },
      { user_id: "cy", labelled: 4, notes_only: 0, who: "no_person" },
      { user_id: "default", labelled: 4, notes_only: 0, who: "before_keys" },
    ]);
    // "default" is one more annotator in the pairs: it agrees with ana on every cell.
    expect(res.json.pairs.find((p: { a: string; b: string }) => p.a === "ana" && p.b === "default")).toMatchObject({ n: 4, accuracy: 1, kappa: 1 });

    // The People page's label authors: every name with current labels, and what it is.
    const authors = await listLabelAuthors();
    expect(authors.filter((a) => a.who !== "person").map((a) => [a.user_id, a.who])).toEqual(
      expect.arrayContaining([
        ["cy", "no_person"],
        ["default", "before_keys"],
      ]),
    );
    expect(authors.find((a) => a.user_id === "default")).toMatchObject({ who: "before_keys" });
    expect(authors.find((a) => a.user_id === "ana")).toMatchObject({ who: "person" });
    expect(authors.find((a) => a.user_id === "ana")!.labels).toBeGreaterThanOrEqual(4);
  });
});
