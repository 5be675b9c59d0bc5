/**
 * Two annotators label the same cells, each signed in with a key of their own: their labels stay apart
 * (each has a current label per cell, neither supersedes the other's), a note without a verdict does not
 * count as labelled, and the agreement between the two is worked by hand.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as metrics from "@/app/api/evaluation-pipeline-nodes/route";
import * as labels from "@/app/api/labels/route";
import * as agreement from "@/app/api/agreement/route";
import * as me from "@/app/api/me/route";
import * as users from "@/app/api/users/route";
import * as userKeys from "@/app/api/users/[id]/keys/route";
import * as annotators from "./route";

const file = JSON.stringify({
  conversations: Array.from({ length: 5 }, (_, i) => ({ name: `task ${i}`, messages: [{ role: "user", content: `task ${i}` }, { role: "assistant", content: `answer ${i}` }] })),
});

let datasetId: number;
let metricId: number;
let conversationIds: number[];
const keys: Record<string, string> = {};
const as = (user: string) => ({ authorization: `Bearer ${keys[user]}` });

beforeAll(async () => {
  // Set up in the one-person mode, then give the team keys: from then on every request needs one.
  const imported = await upload(createAndImport.POST, "/api/datasets/import", { file, fields: { name: "two annotators" } });
  expect(imported.status).toBe(201);
  datasetId = imported.json.dataset_id ?? imported.json.dataset.id;
  const convs = await call(conversationsRoute.GET, "GET", `/api/datasets/${datasetId}/conversations`, { params: { id: datasetId } });
  conversationIds = convs.json.map((c: { id: number }) => c.id);
  const metric = await call(metrics.POST, "POST", "/api/evaluation-pipeline-nodes", {
    body: { dataset_id: datasetId, name: "Solved", evaluation_level: "conversation", prompt: "Solved? @HISTORY", output_type: "checkbox" },
  });
  expect(metric.status).toBe(201);
  metricId = metric.json.id;
  for (const [name, role] of [["lead", "admin"], ["alice", "annotator"], ["bob", "annotator"], ["val", "viewer"]] as const) {
    const headers = keys.lead ? as("lead") : {};
    const user = await call(users.POST, "POST", "/api/users", { body: { name, role }, headers });
    expect(user.status, user.text).toBe(201);
    const key = await call(userKeys.POST, "POST", "/api/users/x/keys", { params: { id: user.json.id }, headers: keys.lead ? as("lead") : {} });
    expect(key.status, key.text).toBe(201);
    keys[name] = key.json.key;
  }
});

const label = (user: string, cell: number, value: boolean | null, note?: string) =>
  call(labels.POST, "POST", "/api/labels", {
    headers: as(user),
    body: { dataset_id: datasetId, pipeline_node_id: metricId, entity_type: "conversation", entity_id: conversationIds[cell], value, ...(note ? { note } : {}) },
  });

describe("two annotators on the same cells", () => {
  it("keep their labels apart, and their agreement is shown pair by pair", async () => {
    expect((await call(me.GET, "GET", "/api/me", { headers: as("alice") })).json).toMatchObject({ user: "alice", role: "annotator" });
    // alice: pass pass fail fail; bob: pass fail fail fail, and a note without a verdict on the fifth cell.
    const alice = [true, true, false, false];
    const bob = [true, false, false, false];
    for (let i = 0; i < 4; i++) {
      expect((await label("alice", i, alice[i])).status).toBe(201);
      expect((await label("bob", i, bob[i])).status).toBe(201);
    }
    expect((await label("bob", 4, null, "cannot tell from the transcript")).status).toBe(201);
    // A viewer reads labels but gives none.
    expect((await label("val", 0, false)).status).toBe(403);

    const read = async (user: string) =>
      (await call(labels.GET, "GET", `/api/labels?dataset_id=${datasetId}&pipeline_node_id=${metricId}&user_id=${user}`, { headers: as("val") })).json as Array<{ entity_id: number; value: unknown; user_id: string; current: boolean }>;
    const aliceLabels = await read("alice");
    expect(aliceLabels.map((l) => [l.entity_id, l.value, l.current])).toEqual(
      [3, 2, 1, 0].map((i) => [conversationIds[i], alice[i], true]),
    );
    const bobLabels = await read("bob");
    expect(bobLabels).toHaveLength(5);
    expect(bobLabels.every((l) => l.user_id === "bob")).toBe(true);

    const res = await call(annotators.GET, "GET", `/api/agreement/annotators?dataset_id=${datasetId}&pipeline_node_id=${metricId}`, { headers: as("val") });
    expect(res.status, res.text).toBe(200);
    expect(res.json.annotators).toEqual([
      { user_id: "alice", labelled: 4, notes_only: 0, who: "person" },
      { user_id: "bob", labelled: 4, notes_only: 1, who: "person" },
    ]);
    // po = 3/4; alice passes 2/4, bob 1/4 → pe = ½·¼ + ½·¾ = ½ → κ = (¾ − ½) / (1 − ½) = ½.
    expect(res.json.pairs).toHaveLength(1);
    expect(res.json.pairs[0]).toMatchObject({ a: "alice", b: "bob", n: 4, accuracy: 0.75, kappa: 0.5, disagreements: 1 });
    // The same figures through the agreement endpoint with one person per source.
    const direct = await call(agreement.GET, "GET", `/api/agreement?dataset_id=${datasetId}&pipeline_node_id=${metricId}&a=labels:alice&b=labels:bob`, { headers: as("val") });
    expect(direct.json).toMatchObject({ n: 4, accuracy: 0.75, kappa: 0.5 });
  });

  it("answers a clear 4xx for what it cannot read", async () => {
    expect((await call(annotators.GET, "GET", `/api/agreement/annotators?dataset_id=${datasetId}&pipeline_node_id=abc`, { headers: as("val") })).status).toBe(400);
    expect((await call(annotators.GET, "GET", `/api/agreement/annotators?dataset_id=999999&pipeline_node_id=${metricId}`, { headers: as("val") })).status).toBe(404);
    expect((await call(annotators.GET, "GET", `/api/agreement/annotators?dataset_id=${datasetId}&pipeline_node_id=${metricId}`)).status).toBe(401);
  });
});
