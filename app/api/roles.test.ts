/**
 * Every route of the API against every role, found from the files themselves so a new route cannot be
 * missed: without a credential 401; a viewer may read but every write is 403; an annotator may write but
 * not manage people (403 there); an admin may do everything. "Allowed" means the request got past the
 * credential and role checks (it may still be a 400 or 404: ids here point at nothing, so nothing changes).
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import * as users from "@/app/api/users/route";
import * as userKeys from "@/app/api/users/[id]/keys/route";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const methods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
/** Reachable without a credential: the sign-in endpoint. */
// /api/health answers without a credential (a load balancer's probe), leaving out the judge settings (lib/api/attacked-doors.test.ts).
const publicRoutes = new Set(["/api/session", "/api/health"]);
/** POSTs that change nothing (a body carries what to compute): open to viewers like a GET. */
// The MCP endpoint carries every tool in POSTs; each tool refuses the role its REST endpoint refuses (app/api/mcp/mcp.test.ts).
const readOnlyPosts = new Set(["/api/evaluation-pipeline-nodes/999999/reference-preview", "/api/mcp"]);
/** Admin-only: managing people and keys. */
const adminRoutes = [/^\/api\/users/, /^\/api\/keys/];

const apiDir = path.join(import.meta.dirname);
function routeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? routeFiles(full) : e.name === "route.ts" ? [full] : [];
  });
}

type Endpoint = { url: string; method: (typeof methods)[number]; handler: Handler; params: Record<string, string> };
const endpoints: Endpoint[] = [];
const keys: Record<"admin" | "annotator" | "viewer", string> = { admin: "", annotator: "", viewer: "" };

beforeAll(async () => {
  for (const file of routeFiles(apiDir)) {
    const rel = path.relative(apiDir, path.dirname(file)).split(path.sep).join("/");
    const url = `/api/${rel}`.replace(/\/$/, "");
    const mod = (await import(/* @vite-ignore */ file)) as Record<string, Handler>;
    // Ids that point at nothing (999999 is no row's), so an allowed write changes nothing.
    const params = Object.fromEntries([...url.matchAll(/\[(\w+)\]/g)].map((m) => [m[1], "999999"]));
    for (const method of methods) if (typeof mod[method] === "function") endpoints.push({ url: url.replace(/\[(\w+)\]/g, "999999"), method, handler: mod[method], params });
  }
  expect(endpoints.length).toBeGreaterThan(40);
  for (const role of ["admin", "annotator", "viewer"] as const) {
    const user = await call(users.POST, "POST", "/api/users", { body: { name: `${role}-1`, role }, headers: keys.admin ? { authorization: `Bearer ${keys.admin}` } : {} });
    expect(user.status).toBe(201);
    const key = await call(userKeys.POST, "POST", "/api/users/x/keys", { params: { id: user.json.id }, headers: keys.admin ? { authorization: `Bearer ${keys.admin}` } : {} });
    expect(key.status).toBe(201);
    keys[role] = key.json.key;
  }
});

const send = (e: Endpoint, headers: Record<string, string>) =>
  call(e.handler, e.method, e.url, { params: e.params, headers: { ...headers, "content-type": "application/json" }, rawBody: e.method === "GET" || e.method === "DELETE" ? undefined : "{}" });

describe("every route, every role", () => {
  it("refuses a request without a credential (401), and one with X-User-Id alone", async () => {
    for (const e of endpoints) {
      if (publicRoutes.has(e.url)) continue;
      const res = await send(e, { "x-user-id": "admin-1" });
      expect(res.status, `${e.method} ${e.url}`).toBe(401);
    }
  });

  for (const role of ["viewer", "annotator", "admin"] as const) {
    it(`${role}: allowed exactly what the role may do`, async () => {
      const seen: string[] = [];
      for (const e of endpoints) {
        if (publicRoutes.has(e.url)) continue;
        const adminOnly = adminRoutes.some((r) => r.test(e.url));
        const writes = e.method !== "GET" && !(e.method === "POST" && readOnlyPosts.has(e.url));
        const allowed = role === "admin" || (!adminOnly && (role === "annotator" || !writes));
        const res = await send(e, { authorization: `Bearer ${keys[role]}` });
        seen.push(`${e.method} ${e.url} ${res.status}`);
        if (allowed) expect([401, 403], `${role} ${e.method} ${e.url}: ${res.text}`).not.toContain(res.status);
        else {
          expect(res.status, `${role} ${e.method} ${e.url}`).toBe(403);
          expect(res.json.error.code).toBe("forbidden");
        }
        expect(res.status, `${role} ${e.method} ${e.url}: ${res.text}`).toBeLessThan(500);
      }
      expect(seen.length).toBeGreaterThan(40);
    });
  }
});
