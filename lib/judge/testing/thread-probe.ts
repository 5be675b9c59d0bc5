/**
 * For lib/judge/call-thread.test.ts: one provider call through the judge thread in a process started
 * the way `npm run worker` starts (tsx, `--conditions=react-server`), against the judge double at
 * PROBE_BASE_URL. Prints one JSON line: how many calls the thread answered and the reply's text.
 */
import { callOnThread, judgeThreadCalls, stopJudgeThread } from "@/lib/judge/call-thread";

async function main() {
  const reply = await callOnThread(
    { baseURL: process.env.PROBE_BASE_URL!, apiKey: "sk-probe", model: "gpt-4o-mini", turns: [{ role: "user", content: "probe" }], system: "judge", schema: { type: "object", properties: { score: { type: "number" } }, required: ["score"] }, timeoutMs: 10_000 },
    undefined,
  );
  process.stdout.write(`${JSON.stringify({ onThread: judgeThreadCalls(), text: reply.text })}\n`);
  await stopJudgeThread();
}

main().catch((error: unknown) => {
  process.stdout.write(`${JSON.stringify({ error: String(error) })}\n`);
  process.exit(1);
});
