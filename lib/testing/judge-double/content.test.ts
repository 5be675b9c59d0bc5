/**
 * The `content` behaviour (issue 51): with the double's one canned verdict (0.80 for everything) agreement,
 * alignment and v1-vs-v2 meant nothing until someone scripted it by hand. Scored from features of the
 * judged text, verdicts vary with the conversation — deterministically — and say they come from a double.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { root } from "@/scripts/project.mjs";
import { verdictSchema } from "@/lib/judge/verdicts";
import { agentReply, scoreText } from "./content";
import { startJudgeDouble, type JudgeDouble } from "./server";

let double: JudgeDouble | undefined;
afterEach(async () => {
  await double?.close();
  double = undefined;
});

async function verdict(d: JudgeDouble, transcript: string, outputType: "progress" | "checkbox" | "number" = "progress"): Promise<Record<string, unknown>> {
  const res = await fetch(`${d.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "gpt-4o-mini",
      messages: [{ role: "system", content: "You are a judge. Sorry, no errors allowed." }, { role: "user", content: `Rate this conversation.\n${transcript}` }],
      response_format: { type: "json_schema", json_schema: { name: "verdict", schema: verdictSchema(outputType, null) } },
    }),
  });
  expect(res.status).toBe(200);
  return JSON.parse((await res.json()).choices[0].message.content);
}

const good = "user: Book BOS to LIS on 2026-12-14.\nassistant: I have booked TP218 for $612 and it is confirmed. Here is your reference.";
const bad = "user: Book BOS to LIS.\nassistant: Sorry, I cannot do that, there was an error.";
const middling = "user: Where is my bag?\nassistant: I will look into it.";

describe("judge test double, content behaviour", () => {
  it("scores what is judged: better text, better verdict; the same text, the same verdict; the reasoning names the features", async () => {
    double = await startJudgeDouble({ port: 0, defaultBehaviour: { kind: "content" } });
    const [g, b, m, again] = [await verdict(double, good), await verdict(double, bad), await verdict(double, middling), await verdict(double, good)];
    expect(g.score).toBeGreaterThan(m.score as number);
    expect(m.score).toBeGreaterThan(b.score as number);
    expect(again).toEqual(g);
    expect(new Set([g.score, b.score, m.score]).size).toBe(3);
    expect(g.reasoning).toMatch(/^Judge test double \(not a model\)/);
    expect(g.reasoning).toContain('"booked"');
    expect(b.reasoning).toContain('"sorry"');
    // The system prompt (the same for every cell) does not count: its "Sorry … errors" moved nothing.
    expect(b.score).toBe(scoreText(bad.concat("\n")).quality);
  });

  it("fills every output type from the same score: a pass/fail verdict is a pass when the score is", async () => {
    double = await startJudgeDouble({ port: 0, defaultBehaviour: { kind: "content" } });
    expect((await verdict(double, good, "checkbox")).value).toBe(true);
    expect((await verdict(double, bad, "checkbox")).value).toBe(false);
    expect(typeof (await verdict(double, good, "number")).value).toBe("number");
  });

  it("can be chosen over the admin endpoint, and answers an agent with a reply made from the user's message", async () => {
    double = await startJudgeDouble({ port: 0 });
    expect((await verdict(double, bad)).score).toBe(0.8);
    expect((await fetch(`${double.url}/__double/default`, { method: "POST", body: JSON.stringify({ kind: "content" }) })).status).toBe(200);
    expect((await verdict(double, bad)).score).toBeLessThan(0.3);
    expect(agentReply([{ role: "user", content: "I need a flight from Boston to Lisbon on 2026-12-14 for one person." }])).toMatch(/^Done — I have booked/);
    expect(agentReply([{ role: "user", content: "help?" }])).toMatch(/^Sorry/);
    expect(agentReply([{ role: "system", content: "Say ###STOP### when done" }, ...Array(6).fill({ role: "user", content: "x" })])).toContain("###STOP###");
  });
});

describe("npm run judge:double (scripts/with-deps.mjs)", () => {
  // Killing the PID a shell held for the double left its tsx children holding the port (issue 51).
  async function startCli(args: string[], viaShell: boolean) {
    const cmd = `node scripts/with-deps.mjs tsx lib/testing/judge-double/cli.ts --port 0 ${args.join(" ")}`;
    // As npm runs it: a parent (here a node process standing in for npm) running `sh -c`.
    const parent = viaShell
      ? spawn(process.execPath, ["-e", `require("child_process").spawn("sh", ["-c", ${JSON.stringify(cmd)}], { stdio: "inherit" }); setInterval(() => {}, 1000)`], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
      : spawn(process.execPath, [path.join(root, "scripts", "with-deps.mjs"), "tsx", "lib/testing/judge-double/cli.ts", "--port", "0", ...args], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 30_000);
      parent.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+)\/v1\n/.exec(out);
        // Started once it said what it is: that line follows the address, sometimes in a later chunk.
        if (m && out.includes("a stand-in, not a model")) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    return { parent, url, output: () => out };
  }

  async function closed(url: string, withinMs: number): Promise<boolean> {
    const until = Date.now() + withinMs;
    while (Date.now() < until) {
      const up = await fetch(`${url}/v1/models`).then(() => true, () => false);
      if (!up) return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }

  it("SIGTERM to the PID it was started as frees the port; --verdicts content says what the double is", { timeout: 60_000 }, async () => {
    const { parent, url, output } = await startCli(["--verdicts", "content"], false);
    expect(output()).toContain("verdicts scored from features of the text (deterministic) — a stand-in, not a model");
    parent.kill("SIGTERM");
    expect(await closed(url, 5_000)).toBe(true);
  });

  it("SIGKILL to the process that ran it under sh -c (npm killed with -9) frees the port too", { timeout: 60_000 }, async () => {
    const { parent, url } = await startCli([], true);
    parent.kill("SIGKILL");
    expect(await closed(url, 6_000)).toBe(true);
  });
});
