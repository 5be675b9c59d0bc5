/**
 * Issue 48, finding 14: the exit contract of `turnscope eval` on every input, the command run as a CI step
 * runs it (a subprocess), against small servers of this test that misbehave on purpose. Anything it cannot
 * understand exits 2 with the reason; every request obeys --timeout (a server that accepts and never
 * answers, or never finishes its body, ends it with 2 within the limit); no secret is printed (a password
 * in --url, the key, even when a server echoes it); a config's dataset and reports lie inside the working
 * directory, symlinks resolved.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const bin = path.join(process.cwd(), "bin", "turnscope.mjs");
const KEY = "tsk_live_7f3a9c2e5b1d";

type Outcome = { code: number | null; stderr: string; ms: number };

function turnscope(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    const env: Record<string, string | undefined> = { ...process.env, TURNSCOPE_URL: undefined, TURNSCOPE_API_KEY: undefined, ...opts.env };
    const child = spawn(process.execPath, [bin, "eval", ...args], { cwd: opts.cwd ?? fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-cli-")), env: env as NodeJS.ProcessEnv, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stderr, ms: Date.now() - started }));
  });
}

/** A server of this test: each request answered by `handle` (or never). */
async function serve(handle: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void) {
  const seen: Array<{ method: string; url: string; authorization?: string; body: Buffer }> = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body });
      handle(req, res, body);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const json = (res: http.ServerResponse, status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

describe("anything it cannot understand exits 2 with the reason, before any request", () => {
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    server = await serve((_req, res) => json(res, 200, {}));
  });
  afterAll(() => server.close());

  it.each([
    [["--dataset", "1", "--mn", "quality=0.7"], "unknown option --mn (did you mean --min?)"],
    [["--dataset", "1", "--thresold", "mean"], "unknown option --thresold (did you mean --threshold?)"],
    [["--dataset", "1", "--timeout", "abc"], '--timeout (seconds) must be a number from 0.001 to 604800 (got "abc")'],
    [["--dataset", "1", "--timeout", "-5"], "--timeout (seconds) must be a number"],
    [["--dataset", "1", "--repeats", "two"], "--repeats must be an integer from 1 to 10"],
    [["--dataset", "1", "--batch-size", "0"], "--batch-size must be an integer from 1 to 256"],
    [["--dataset", "1", "--baseline", "yesterday"], "--baseline yesterday: an execution id or latest"],
    [["--dataset", "1", "--min", "quality=high"], "--min quality=high: write <metric>=<number>"],
    [["--dataset", "1", "--target", "2", "--max-turns", "many"], "--max-turns must be an integer from 1 to 50"],
    [["--dataset", "1", "--max-turns", "3"], "--max-turns goes with --target"],
    [["--dataset", "1", "stray"], "unexpected argument #5 (not an option"],
    [["--dataset", "1", "--metric"], "--metric needs a value"],
    [["--dataset", "1", "--help=yes"], "--help takes no value"],
    [["--dataset", "1", "--url", "not a url"], "--url is not a URL"],
  ])("%j", async (args, reason) => {
    const out = await turnscope(["--url", server.url, ...args]);
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain(reason);
    expect(server.seen).toEqual([]);
  });

  it("a config it cannot understand: an unknown key, a wrong type, not an object", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-cli-"));
    const cases: Array<[unknown, string]> = [
      [{ dataset: 1, thresold: "mean" }, 'unknown key "thresold" (did you mean threshold?)'],
      [{ dataset: 1, min: { quality: "high" } }, "the config's min must be an object of numbers"],
      [{ dataset: 1, metrics: "quality" }, "the config's metrics must be a list"],
      [{ dataset: 1, timeout: "soon" }, "--timeout (seconds) must be a number"],
      [[1, 2], "must be a JSON object"],
    ];
    for (const [config, reason] of cases) {
      fs.writeFileSync(path.join(dir, "turnscope.eval.json"), JSON.stringify(config));
      const out = await turnscope(["--url", server.url], { cwd: dir });
      expect([out.code, out.stderr]).toEqual([2, expect.stringContaining(reason)]);
    }
    expect(server.seen).toEqual([]);
  });
});

describe("every request obeys --timeout", () => {
  it("a server that accepts the connection and never answers: exit 2 naming the limit, within it", async () => {
    const silent = net.createServer(() => undefined); // accepts, reads nothing, answers nothing
    const open = new Set<net.Socket>();
    silent.on("connection", (s) => open.add(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const out = await turnscope(["--url", `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, "--dataset", "1", "--timeout", "1.5"]);
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain("no answer from http://127.0.0.1:");
      expect(out.stderr).toContain("within --timeout 1.5 s (GET /api/me)");
      expect(out.ms).toBeLessThan(1500 + 3000);
      expect(out.ms).toBeGreaterThanOrEqual(1400);
    } finally {
      for (const s of open) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it("a server that sends its headers and never ends the body; one that answers the first request only", async () => {
    const dripping = await serve((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"id": 1');
      // …and nothing more, ever.
    });
    const laterSilent = await serve((req, res) => {
      if (req.url === "/api/me") return json(res, 200, { user_id: "default" });
      // Every later request: accepted, never answered.
    });
    try {
      const drip = await turnscope(["--url", dripping.url, "--dataset", "1", "--timeout", "1"]);
      expect([drip.code, drip.stderr]).toEqual([2, expect.stringContaining("within --timeout 1 s (GET /api/me)")]);
      expect(drip.ms).toBeLessThan(1000 + 3000);
      const later = await turnscope(["--url", laterSilent.url, "--dataset", "7", "--timeout", "1"]);
      expect([later.code, later.stderr]).toEqual([2, expect.stringContaining("within --timeout 1 s (GET /api/datasets/7)")]);
      expect(later.ms).toBeLessThan(1000 + 3000);
    } finally {
      await dripping.close();
      await laterSilent.close();
    }
  });
});

describe("it never prints a secret", () => {
  it("a password or a key in --url is refused without printing it, and nothing is sent", async () => {
    const server = await serve((_req, res) => json(res, 200, {}));
    try {
      const port = new URL(server.url).port;
      const withPassword = await turnscope(["--url", `http://ci-bot:hunter2-Secret@127.0.0.1:${port}`, "--dataset", "1"]);
      expect(withPassword.code, withPassword.stderr).toBe(2);
      expect(withPassword.stderr).toContain(`--url holds a user or password (http://***@127.0.0.1:${port})`);
      expect(withPassword.stderr).not.toContain("hunter2");
      expect(withPassword.stderr).not.toContain("ci-bot");
      const fromEnv = await turnscope(["--dataset", "1"], { env: { TURNSCOPE_URL: `http://ci-bot:hunter2-Secret@127.0.0.1:${port}` } });
      expect([fromEnv.code, fromEnv.stderr.includes("hunter2")]).toEqual([2, false]);
      expect(fromEnv.stderr).toContain("TURNSCOPE_URL holds a user or password");
      const inQuery = await turnscope(["--url", `http://127.0.0.1:${port}/?api_key=${KEY}`, "--dataset", "1"]);
      expect(inQuery.code, inQuery.stderr).toBe(2);
      expect(inQuery.stderr).not.toContain(KEY);
      expect(server.seen).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("the key is never printed: not from a mistyped option, not when a server echoes it in an error, not in a report", async () => {
    // A server (or a proxy in front of it) whose errors echo the request's Authorization header.
    const echo = await serve((req, res) => {
      if (req.url === "/api/me") return json(res, 200, { user_id: "default" });
      json(res, 500, { error: { message: `upstream refused ${req.headers.authorization}` } });
    });
    try {
      const mistyped = await turnscope(["--url", echo.url, "--dataset", "1", `--kye=${KEY}`]);
      expect(mistyped.code).toBe(2);
      expect(mistyped.stderr).toContain("unknown option --kye (did you mean --key?)");
      expect(mistyped.stderr).not.toContain(KEY);
      const dashed = await turnscope(["--url", echo.url, "--dataset", "1", "-key", KEY]);
      expect([dashed.code, dashed.stderr.includes(KEY)]).toEqual([2, false]);

      for (const how of [["--key", KEY], []]) {
        const echoed = await turnscope(["--url", echo.url, "--dataset", "3", ...how], { env: how.length ? {} : { TURNSCOPE_API_KEY: KEY } });
        expect(echoed.code, echoed.stderr).toBe(2);
        expect(echoed.stderr).toContain("dataset 3: 500 upstream refused Bearer ***");
        expect(echoed.stderr).not.toContain(KEY);
      }
      // The server did get the key.
      expect(echo.seen.filter((r) => r.url === "/api/datasets/3").map((r) => r.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    } finally {
      await echo.close();
    }
  });
});

describe("a config's dataset (and reports) must lie inside the working directory", () => {
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    server = await serve((req, res) => {
      if (req.url === "/api/me") return json(res, 200, { user_id: "default" });
      if (req.url === "/api/datasets/import") return json(res, 201, { dataset: { id: 41 }, conversations_imported: 1 });
      json(res, 503, { error: { message: "stop here" } });
    });
  });
  afterAll(() => server.close());

  /** A runner's checkout: the repository's files in `repo`, a secret of the runner beside it. */
  function runner() {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-runner-"));
    const repo = path.join(root, "repo");
    fs.mkdirSync(repo);
    const secret = path.join(root, "credentials.json");
    fs.writeFileSync(secret, '{"conversations": [{"messages": [{"role": "user", "content": "RUNNER-SECRET"}]}]}');
    fs.writeFileSync(path.join(repo, "data.json"), '{"conversations": [{"messages": [{"role": "user", "content": "hello"}]}]}');
    return { root, repo, secret };
  }
  const config = (repo: string, body: Record<string, unknown>) => fs.writeFileSync(path.join(repo, "turnscope.eval.json"), JSON.stringify(body));
  const uploads = () => server.seen.filter((r) => r.url === "/api/datasets/import").map((r) => r.body.toString("latin1"));

  it("refuses a path outside it, an absolute path, and a symlink that resolves outside it (exit 2, nothing uploaded)", async () => {
    const { repo, secret } = runner();
    fs.symlinkSync(secret, path.join(repo, "innocent.json"));
    fs.symlinkSync(path.dirname(secret), path.join(repo, "linked-dir"));
    const before = uploads().length;
    for (const dataset of ["../credentials.json", secret, "innocent.json", "linked-dir/credentials.json"]) {
      config(repo, { dataset, url: server.url });
      const out = await turnscope([], { cwd: repo });
      expect(out.code, `${dataset}: ${out.stderr}`).toBe(2);
      expect(out.stderr).toContain("is outside the working directory");
    }
    // A report the config names is a file written on the runner: held to the same rule.
    config(repo, { dataset: "data.json", url: server.url, markdown: "../.bashrc" });
    const report = await turnscope([], { cwd: repo });
    expect([report.code, report.stderr]).toEqual([2, expect.stringContaining("the config's markdown report")]);
    expect(uploads().length).toBe(before);
    expect(uploads().join("")).not.toContain("RUNNER-SECRET");
  });

  it("a file inside it, or a symlink to one inside it, is uploaded", async () => {
    const { repo } = runner();
    fs.mkdirSync(path.join(repo, "evals"));
    fs.writeFileSync(path.join(repo, "evals", "cases.json"), '{"conversations": [{"messages": [{"role": "user", "content": "inside"}]}]}');
    fs.symlinkSync(path.join(repo, "evals", "cases.json"), path.join(repo, "cases-link.json"));
    for (const dataset of ["evals/cases.json", "cases-link.json"]) {
      config(repo, { dataset, url: server.url });
      const before = uploads().length;
      const out = await turnscope([], { cwd: repo });
      // The upload is accepted; this server then stops the command (exit 2), which is not the point here.
      expect(out.stderr).toContain("imported");
      expect(uploads().length).toBe(before + 1);
      expect(uploads().at(-1)).toContain("inside");
    }
  });
});
