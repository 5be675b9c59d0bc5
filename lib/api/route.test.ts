import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http";
import { AppError } from "./errors";
import { json, route } from "./route";

afterEach(() => {
  delete process.env.API_TOKEN;
  resetConfig();
});

const echo = route({
  body: z.object({ n: z.number().int(), tags: z.array(z.string()).optional() }),
  handler: ({ body, userId }) => json({ body, userId }),
});

describe("route wrapper", () => {
  it("parses the body and names the caller from X-User-Id", async () => {
    const res = await call(echo, "POST", "/x", { body: { n: 1 }, headers: { "x-user-id": "ana" } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ body: { n: 1 }, userId: "ana" });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("reports every bad field with a readable path", async () => {
    const res = await call(echo, "POST", "/x", { body: { n: "one", tags: ["a", 2] } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("bad_request");
    expect(res.json.error.details.map((d: { path: string }) => d.path)).toEqual(["n", "tags[1]"]);
  });

  it("maps AppError to its status and hides unexpected errors behind a generic 500", async () => {
    const conflict = route({ handler: () => { throw new AppError("conflict", "already final"); } });
    expect((await call(conflict, "DELETE", "/x")).json).toEqual({
      error: { code: "conflict", message: "already final", details: [] },
    });
    const bug = route({ handler: () => { throw new Error("SQLITE_ERROR: no such column secret_col at /srv/app.ts:1"); } });
    const res = await call(bug, "GET", "/x");
    expect(res.status).toBe(500);
    expect(res.json.error).toEqual({ code: "internal", message: "Internal server error", details: [] });
    expect(res.text).not.toMatch(/SQLITE|secret_col|app\.ts/);
  });

  it("requires the bearer token when API_TOKEN is set", async () => {
    process.env.API_TOKEN = "s3cret-token";
    resetConfig();
    const none = await call(echo, "POST", "/x", { body: { n: 1 } });
    expect(none.status).toBe(401);
    expect(none.json.error.code).toBe("unauthorized");
    expect(none.text).not.toContain("s3cret-token");
    const wrong = await call(echo, "POST", "/x", { body: { n: 1 }, headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    const right = await call(echo, "POST", "/x", { body: { n: 1 }, headers: { authorization: "Bearer s3cret-token" } });
    expect(right.status).toBe(200);
  });
});

describe("UI session cookie", () => {
  it("lets our own pages' calls through without the token, but not another site's", async () => {
    const { UI_SESSION_COOKIE, uiSessionValue } = await import("./ui-session");
    process.env.API_TOKEN = "s3cret-token";
    resetConfig();
    const cookie = `${UI_SESSION_COOKIE}=${uiSessionValue("s3cret-token")}`;
    expect(uiSessionValue("s3cret-token")).not.toContain("s3cret");
    const same = await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie, "sec-fetch-site": "same-origin" } });
    expect(same.status).toBe(200);
    const cross = await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie, "sec-fetch-site": "cross-site" } });
    expect(cross.status).toBe(401);
    const forged = await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie: `${UI_SESSION_COOKIE}=forged`, "sec-fetch-site": "same-origin" } });
    expect(forged.status).toBe(401);
  });
});
