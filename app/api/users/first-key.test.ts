/**
 * The first admin key, made from the one-person mode (the People page's "Add yourself as an admin", then
 * "New key"), signs its creator in: without it the page's next request had no credential ("Missing
 * credential") while the page still said the server was open. Later keys sign nobody in.
 */
import { describe, expect, it } from "vitest";
import { call } from "@/lib/testing/http/call";
import * as me from "@/app/api/me/route";
import * as users from "./route";
import * as userKeys from "./[id]/keys/route";

const cookieOf = (setCookie: string | null) => setCookie?.split(";")[0] ?? null;

describe("POST /api/users/{id}/keys from the one-person mode", () => {
  it("sets the session cookie of the new admin key, so its creator stays signed in; a later key does not", async () => {
    const lead = await call(users.POST, "POST", "/api/users", { body: { name: "lead", role: "admin" } });
    expect(lead.status).toBe(201);
    const first = await call(userKeys.POST, "POST", "/api/users/x/keys", { params: { id: lead.json.id }, body: { name: "laptop" }, headers: { "sec-fetch-site": "same-origin" } });
    expect(first.status, first.text).toBe(201);
    const cookie = cookieOf(first.headers.get("set-cookie"));
    expect(cookie).toMatch(/^turnscope_session=.+/);
    expect(cookie).not.toContain(first.json.key);
    // The server now needs a credential: without one 401, with the cookie the creator is the admin "lead".
    expect((await call(me.GET, "GET", "/api/me")).status).toBe(401);
    const signedIn = await call(me.GET, "GET", "/api/me", { headers: { cookie: cookie!, "sec-fetch-site": "same-origin" } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.json).toMatchObject({ user: "lead", role: "admin", via: "session" });

    // Keys made once the server is locked sign nobody in (the admin keeps their own session).
    const ana = await call(users.POST, "POST", "/api/users", { body: { name: "ana", role: "annotator" }, headers: { cookie: cookie!, "sec-fetch-site": "same-origin" } });
    expect(ana.status).toBe(201);
    const second = await call(userKeys.POST, "POST", "/api/users/x/keys", { params: { id: ana.json.id }, body: {}, headers: { cookie: cookie!, "sec-fetch-site": "same-origin" } });
    expect(second.status).toBe(201);
    expect(second.headers.get("set-cookie")).toBeNull();
  });
});
