import { describe, expect, it } from "vitest";
import { upsertSystemTemplates } from "@/db/repositories/templates";
import { systemTemplateValues } from "@/lib/metrics/templates";
import { systemTemplates } from "@/lib/metrics/system-templates";
import { call } from "@/lib/testing/http/call";
import * as collection from "./route";
import * as item from "./[id]/route";

const templateKeys = [
  "applies_to",
  "category",
  "check",
  "created_at",
  "description",
  "evaluation_level",
  "id",
  "is_advanced",
  "is_system",
  "kind",
  "model_name",
  "name",
  "output_schema",
  "output_type",
  "prompt",
  "template_variables",
  "updated_at",
  "user_id",
];

type Template = { id: number; name: string; is_system: boolean; user_id: string | null; evaluation_level: string; category: string | null };

const as = (user?: string) => (user ? { "x-user-id": user } : undefined);
const list = async (query = "", user?: string) =>
  (await call(collection.GET, "GET", `/api/metric-templates${query}`, { headers: as(user) })).json as Template[];
const create = (body: unknown, user?: string) => call(collection.POST, "POST", "/api/metric-templates", { body, headers: as(user) });
const get = (id: number, user?: string) =>
  call(item.GET, "GET", `/api/metric-templates/${id}`, { params: { id }, headers: user ? { "x-user-id": user } : {} });
const patch = (id: number, body: unknown, user?: string) =>
  call(item.PATCH, "PATCH", `/api/metric-templates/${id}`, { body, params: { id }, headers: as(user) });
const remove = (id: number, user?: string) => call(item.DELETE, "DELETE", `/api/metric-templates/${id}`, { params: { id }, headers: as(user) });

const mine = {
  name: "Refund policy",
  description: "Refunds follow policy",
  evaluation_level: "message",
  prompt: "Does @CONTENT follow the refund policy for @CURRENT_MESSAGE.input? Then @CONTENT again.",
  output_type: "checkbox",
  category: "Policy",
};

describe("system templates", () => {
  it("are seeded once, read-only, and listed before the caller's own", async () => {
    const all = await list();
    const system = all.filter((t) => t.is_system);
    expect(system).toHaveLength(systemTemplates.length);
    expect(system.every((t) => t.user_id === null)).toBe(true);
    expect(system.map((t) => t.name)).toContain("Goal Achievement");
    const goal = (await get(system[0].id)).json;
    expect(Object.keys(goal).sort()).toEqual(templateKeys);
    expect(goal).toMatchObject({ is_system: true, is_advanced: true, template_variables: ["@GOAL", "@HISTORY"] });

    expect((await patch(goal.id, { name: "Mine now" })).status).toBe(403);
    const del = await remove(goal.id);
    expect(del.status).toBe(403);
    expect(del.json.error.code).toBe("forbidden");
    expect((await get(goal.id)).json.name).toBe("Goal Achievement");
  });

  it("are updated in place by key, without duplicates, when seeding runs again", async () => {
    const before = (await list()).filter((t) => t.is_system);
    const values = systemTemplateValues();
    expect(await upsertSystemTemplates(values)).toEqual({ inserted: 0, updated: 0 });
    const changed = values.map((v, i) => (i === 0 ? { ...v, description: "A better description" } : v));
    expect(await upsertSystemTemplates(changed)).toEqual({ inserted: 0, updated: 1 });
    const after = (await list()).filter((t) => t.is_system);
    expect(after.map((t) => t.id)).toEqual(before.map((t) => t.id));
    expect((await get(before[0].id)).json.description).toBe("A better description");
    await upsertSystemTemplates(values);
  });
});

describe("user templates", () => {
  it("are created for the caller with derived variables; input is_system/user_id/variables are ignored", async () => {
    const res = await create({ ...mine, is_system: true, user_id: "mallory", template_variables: ["@X"], is_advanced: false }, "alice");
    expect(res.status).toBe(201);
    expect(Object.keys(res.json).sort()).toEqual(templateKeys);
    expect(res.json).toMatchObject({
      name: "Refund policy",
      is_system: false,
      user_id: "alice",
      is_advanced: true,
      template_variables: ["@CONTENT", "@CURRENT_MESSAGE.input"],
      output_schema: null,
      model_name: null,
    });
    const basic = await create({ ...mine, name: "Basic", prompt: "Is it polite? Ask ops@example.com." });
    expect(basic.json).toMatchObject({ user_id: "default", is_advanced: false, template_variables: [] });
  });

  it("are listed for their owner only, and filter by level and category", async () => {
    await create({ ...mine, name: "Bob's" }, "bob");
    const carol = await create({ ...mine, name: "Carol's step", evaluation_level: "step", prompt: "@CURRENT_STEP.tool_call ok?" }, "carol");
    expect((await list("", "bob")).filter((t) => !t.is_system).map((t) => t.name)).toEqual(["Bob's"]);
    const carols = await list("?evaluation_level=step", "carol");
    expect(carols.every((t) => t.evaluation_level === "step")).toBe(true);
    expect(carols.map((t) => t.id)).toContain(carol.json.id);
    const safety = await list("?category=Safety");
    expect(safety.length).toBeGreaterThan(3);
    expect(safety.every((t) => t.category === "Safety")).toBe(true);
    expect(await list("?category=Policy", "bob")).toHaveLength(1);
    expect((await call(collection.GET, "GET", "/api/metric-templates?evaluation_level=turn")).status).toBe(400);
  });

  it("can be changed and deleted by their owner only (403 for others, 404 for unknown ids)", async () => {
    const { json: t } = await create(mine, "dave");
    expect((await patch(t.id, { name: "Hijacked" }, "eve")).status).toBe(403);
    expect((await remove(t.id, "eve")).status).toBe(403);
    expect((await remove(t.id)).status).toBe(403);
    // Other users' templates are invisible to them (404), and changing one is forbidden (403).
    expect((await get(t.id, "dave")).status).toBe(200);
    expect((await get(t.id, "eve")).status).toBe(404);
    expect((await get(t.id)).status).toBe(404);

    const updated = await patch(t.id, { prompt: "Judge @CURRENT_MESSAGE.role only", description: null }, "dave");
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ description: null, template_variables: ["@CURRENT_MESSAGE.role"], name: "Refund policy" });
    expect(updated.json.updated_at >= t.updated_at).toBe(true);

    expect((await remove(t.id, "dave")).status).toBe(204);
    const gone = await get(t.id, "dave");
    expect(gone.status).toBe(404);
    expect(gone.json.error).toMatchObject({ code: "not_found", message: `Metric template ${t.id} does not exist` });
    expect((await patch(t.id, { name: "x" }, "dave")).status).toBe(404);
    expect((await remove(t.id, "dave")).status).toBe(404);
    expect((await get(999_999)).status).toBe(404);
    expect((await call(item.GET, "GET", "/api/metric-templates/abc", { params: { id: "abc" } })).status).toBe(400);
  });

  it("reject variables not valid at their level with 422 naming the valid ones", async () => {
    const res = await create({ ...mine, evaluation_level: "conversation", prompt: "Check @CURRENT_STEP.tool_call and @GOAL and @NOPE" });
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe("unprocessable");
    expect(res.json.error.message).toContain("@CURRENT_STEP.tool_call, @NOPE");
    expect(res.json.error.message).toContain("Valid variables at the conversation level: @HISTORY, @GOAL, @LIST_AGENT");
    expect(res.json.error.details).toEqual([
      { path: "prompt", message: "@CURRENT_STEP.tool_call is not available at the conversation level (only at: step)" },
      { path: "prompt", message: "@NOPE is not a known variable" },
    ]);

    const { json: t } = await create(mine, "frank");
    const moved = await patch(t.id, { evaluation_level: "conversation" }, "frank");
    expect(moved.status).toBe(422);
    expect(moved.json.error.message).toContain("@CONTENT");
    expect((await get(t.id, "frank")).json.evaluation_level).toBe("message");
  });

  it("require a JSON object schema for json output, and drop it for other types", async () => {
    const noSchema = await create({ ...mine, output_type: "json" });
    expect(noSchema.status).toBe(422);
    expect(noSchema.json.error.details[0].path).toBe("output_schema");
    expect((await create({ ...mine, output_type: "json", output_schema: { type: "array" } })).status).toBe(422);
    const schema = { type: "object", properties: { score: { type: "number" } }, required: ["score"] };
    const ok = await create({ ...mine, output_type: "json", output_schema: schema }, "gina");
    expect(ok.status).toBe(201);
    expect(ok.json.output_schema).toEqual(schema);
    const toProgress = await patch(ok.json.id, { output_type: "progress" }, "gina");
    expect(toProgress.json.output_schema).toBeNull();
    expect((await create({ ...mine, output_schema: schema })).json.output_schema).toBeNull();
  });

  it.each([
    [{ ...mine, name: "" }, "name"],
    [{ ...mine, prompt: "   " }, "prompt"],
    [{ ...mine, evaluation_level: "turn" }, "evaluation_level"],
    [{ ...mine, output_type: "stars" }, "output_type"],
    [{ ...mine, output_schema: [1] }, "output_schema"],
    [{ name: "x" }, "prompt"],
  ])("rejects a malformed body %# with 400 naming %s", async (body, field) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.json.error.details.map((d: { path: string }) => d.path)).toContain(field);
  });

  it("rejects an empty PATCH with 400", async () => {
    const { json: t } = await create(mine, "hank");
    expect((await patch(t.id, {}, "hank")).status).toBe(400);
  });
});
