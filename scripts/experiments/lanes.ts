/**
 * The floor under the served efficiency figure: 32 lanes that do nothing but call the judge test
 * double (in its own process, over HTTP) one call after another, 2,000 calls at a 100 ms latency.
 * Whatever this loses against ⌈2000/32⌉ × 100 ms is lost before any of our code runs.
 *   npx tsx scripts/experiments/lanes.ts [latencyMs] [--sdk]
 * `--sdk` makes each call through the AI SDK's OpenAI provider (doGenerate) with our HTTP client;
 * `--thread` the same call on the judge thread (lib/judge/call-thread.ts); `--prompt-bytes N` the
 * prompt's size (default ~1 kB).
 */
import { spawn } from "node:child_process";
import { createOpenAI } from "@ai-sdk/openai";
import { callOnThread, stopJudgeThread, warmJudgeThread } from "@/lib/judge/call-thread";
import { judgeFetch as httpFetch } from "@/lib/judge/http-fetch";

const latency = Number(process.argv[2] ?? 100);
const sdk = process.argv.includes("--sdk");
const onThread = process.argv.includes("--thread");
const promptAt = process.argv.indexOf("--prompt-bytes");
const promptText = "Rate this answer: x".repeat(Math.ceil((promptAt >= 0 ? Number(process.argv[promptAt + 1]) : 950) / 19));
const LANES = 32;
const CALLS = 2000;

async function main() {
  const double = spawn(process.execPath, ["--import", "tsx", "lib/testing/judge-double/cli.ts", "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve) =>
    double.stdout!.on("data", (d: Buffer) => {
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(d.toString());
      if (m) resolve(m[0]);
    }),
  );
  await fetch(`${url}/__double/latency`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(latency) });
  const model = createOpenAI({ baseURL: `${url}/v1`, apiKey: "sk-x", fetch: httpFetch }).chat("gpt-4o-mini");
  if (onThread) await warmJudgeThread();
  const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: promptText }], response_format: { type: "json_schema", json_schema: { name: "verdict", schema: { type: "object" } } } });
  const call = async () => {
    if (onThread) {
      await callOnThread({ baseURL: `${url}/v1`, apiKey: "sk-x", model: "gpt-4o-mini", turns: [{ role: "user", content: promptText }], system: "You are a judge.", schema: { type: "object" }, timeoutMs: 30_000 }, undefined);
    } else if (sdk) {
      await model.doGenerate({ prompt: [{ role: "user", content: [{ type: "text", text: promptText }] }], responseFormat: { type: "json", schema: { type: "object" }, name: "verdict" } });
    } else {
      const res = await httpFetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-x" }, body });
      await res.json();
    }
  };
  for (let i = 0; i < LANES; i++) await call(); // warm
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (next < CALLS) {
        next++;
        const s = performance.now();
        await call();
        times.push(performance.now() - s);
      }
    }),
  );
  const ms = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  const ideal = Math.ceil(CALLS / LANES) * latency;
  await stopJudgeThread();
  console.log(JSON.stringify({ sdk, onThread, promptBytes: promptText.length, latency, ms: Math.round(ms), ideal, efficiency: Math.round((ideal / ms) * 1000) / 1000, cpu_ms_per_call: Math.round(((used.user + used.system) / 1000 / CALLS) * 100) / 100, call_ms: { p50: Math.round(times[CALLS / 2]), p90: Math.round(times[Math.floor(CALLS * 0.9)]), p99: Math.round(times[Math.floor(CALLS * 0.99)]) } }));
  double.kill();
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
