import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { resetConfig } from "@/lib/config";
import { call } from "@/lib/testing/http/call";
import { AppError } from "@/lib/errors";
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

describe("sign-in sessions (API_TOKEN set)", () => {
  const signInReq = (body: string, headers: Record<string, string> = {}) =>
    new Request("http://localhost/api/session", { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const cookieOf = (res: Response) => res.headers.get("set-cookie")?.split(";")[0] ?? "";

  it("a session from /api/session opens the API; a forged, signed-out or cross-site one does not", async () => {
    process.env.API_TOKEN = "s3cret-token";
    resetConfig();
    const { signIn, signOut } = await import("./sign-in");
    const { SESSION_COOKIE } = await import("./session");
    const res = await signIn(signInReq(JSON.stringify({ token: "s3cret-token" })));
    expect(res.status).toBe(200);
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Max-Age=43200/);
    expect(setCookie).not.toContain("s3cret");
    const cookie = cookieOf(res);
    // curl with the cookie jar of a signed-in browser: no Origin, no Fetch Metadata.
    const withCookie = await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie } });
    expect(withCookie.status).toBe(200);
    expect(withCookie.json.userId).toBe("admin");
    expect((await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie, "sec-fetch-site": "same-origin" } })).status).toBe(200);
    expect((await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie, "sec-fetch-site": "cross-site" } })).status).toBe(401);
    expect((await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie, origin: "https://evil.example" } })).status).toBe(401);
    const forged = `${SESSION_COOKIE}=${"A".repeat(43)}`;
    expect((await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie: forged } })).status).toBe(401);
    // A wrong bearer token is refused even with a valid cookie beside it.
    expect((await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie, authorization: "Bearer nope" } })).status).toBe(401);
    // Sign-out ends the session on the server: a copy of the cookie kept from before is refused.
    const out = await signOut(new Request("http://localhost/api/session", { method: "DELETE", headers: { cookie } }));
    expect(out.status).toBe(204);
    expect((await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie } })).status).toBe(401);
  });

  it("a new API_TOKEN ends the sessions signed in with the old one", async () => {
    process.env.API_TOKEN = "s3cret-token";
    resetConfig();
    const { signIn } = await import("./sign-in");
    const cookie = cookieOf(await signIn(signInReq(JSON.stringify({ token: "s3cret-token" }))));
    expect((await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie } })).status).toBe(200);
    process.env.API_TOKEN = "rotated-token";
    resetConfig();
    expect((await call(echo, "POST", "/x", { body: { n: 1 }, headers: { cookie } })).status).toBe(401);
  });

  it("refuses a wrong token, locks out after repeated failures, and refuses sign-in from another site", async () => {
    process.env.API_TOKEN = "s3cret-token";
    resetConfig();
    const { signIn } = await import("./sign-in");
    const { peerHeader } = await import("./client-address");
    const { resetThrottle } = await import("@/lib/auth");
    resetThrottle();
    const ip = { [peerHeader()]: "203.0.113.9" };
    await expect(signIn(signInReq(JSON.stringify({ token: "guess" }), ip))).rejects.toMatchObject({ status: 401 });
    for (let i = 0; i < 9; i++) await signIn(signInReq(JSON.stringify({ token: `guess${i}` }), ip)).catch(() => undefined);
    await expect(signIn(signInReq(JSON.stringify({ token: "s3cret-token" }), ip))).rejects.toMatchObject({ status: 429 });
    const locked = await call(echo, "POST", "/x", { body: { n: 1 }, headers: { ...ip, authorization: "Bearer s3cret-token" } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    await expect(signIn(signInReq(JSON.stringify({ token: "s3cret-token" }), { "sec-fetch-site": "cross-site" }))).rejects.toMatchObject({ status: 403 });
    await expect(signIn(signInReq("{bad"))).rejects.toMatchObject({ status: 400 });
    resetThrottle();
  });

  it("the form post redirects to a path on this site only, with the cookie", async () => {
    process.env.API_TOKEN = "s3cret-token";
    resetConfig();
    const { signIn } = await import("./sign-in");
    const form = (next: string, token = "s3cret-token") =>
      new Request("http://localhost/api/session", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, next }).toString(),
      });
    const ok = await signIn(form("/datasets/3?x=1"));
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/datasets/3?x=1");
    expect(ok.headers.get("set-cookie")).toMatch(/^turnscope_session=[A-Za-z0-9_-]{43};/);
    // Each of these ended on another origin in a browser (or answered 500) before next was normalised.
    for (const next of ["//evil.example/", "https://evil.example/", "/\tevil.example", "/\t/evil.example", "/\\evil.example", "/.//evil.example", "/a\nb", "/%0a/x\r\n"]) {
      const res = await signIn(form(next));
      expect(res.status, next).toBe(303);
      const location = res.headers.get("location") ?? "";
      expect(new URL(location, "http://localhost").origin, next).toBe("http://localhost");
      expect(location.startsWith("//"), next).toBe(false);
    }
    const bad = await signIn(form("/", "nope"));
    expect(bad.headers.get("location")).toMatch(/^\/signin\?error=invalid/);
    expect(bad.headers.get("set-cookie")).toBeNull();
  });
});

describe("pages with API_TOKEN set (proxy)", () => {
  it("redirect to sign-in without a session, never hand out a cookie, and pass a signed-in browser", async () => {
    process.env.API_TOKEN = "s3cret-token";
    resetConfig();
    const { NextRequest } = await import("next/server");
    const { proxy } = await import("@/proxy");
    const { signIn, signOut } = await import("./sign-in");
    const anon = await proxy(new NextRequest("http://localhost/datasets/1?tab=grid"));
    expect(anon.status).toBe(307);
    expect(anon.headers.get("location")).toBe("http://localhost/signin?next=%2Fdatasets%2F1%3Ftab%3Dgrid");
    expect(anon.headers.get("set-cookie")).toBeNull();
    const signinPage = await proxy(new NextRequest("http://localhost/signin"));
    expect(signinPage.headers.get("location")).toBeNull();
    const cookie = (await signIn(new Request("http://localhost/api/session", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token: "s3cret-token" }) })))
      .headers.get("set-cookie")!
      .split(";")[0];
    const signedIn = await proxy(new NextRequest("http://localhost/", { headers: { cookie } }));
    expect(signedIn.headers.get("location")).toBeNull();
    expect(signedIn.headers.get("x-middleware-next")).toBe("1");
    const bearer = await proxy(new NextRequest("http://localhost/", { headers: { authorization: "Bearer s3cret-token" } }));
    expect(bearer.headers.get("x-middleware-next")).toBe("1");
    const wrongBearer = await proxy(new NextRequest("http://localhost/", { headers: { authorization: "Bearer nope" } }));
    expect(wrongBearer.status).toBe(307);
    await signOut(new Request("http://localhost/api/session", { method: "DELETE", headers: { cookie } }));
    const signedOut = await proxy(new NextRequest("http://localhost/", { headers: { cookie } }));
    expect(signedOut.status).toBe(307);
  });
});
