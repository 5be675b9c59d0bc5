/**
 * Judge TEST DOUBLE — command-line launcher.
 *
 *   tsx lib/testing/judge-double/cli.ts --port 4010 [--host 127.0.0.1] [--seed 7] [--require-api-key KEY] [--verdicts content]
 *
 * `--verdicts content`: verdicts scored from features of the judged text (content.ts), so they vary with
 * the conversation; the default (`fixed`) synthesises the same verdict for every prompt (0.8, true).
 *
 * Runs the OpenAI-compatible test double as its own process so the Next server
 * (under Playwright) and the reliability suite can point their judge provider
 * at it and script it over the /__double/* admin endpoints. Not a model.
 */
import { parseArgs } from "node:util";
import { startJudgeDouble } from "./server";

function toInt(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string" },
      host: { type: "string" },
      seed: { type: "string" },
      "require-api-key": { type: "string" },
      verdicts: { type: "string" },
    },
  });
  const verdicts = values.verdicts ?? "fixed";
  if (verdicts !== "fixed" && verdicts !== "content") throw new Error(`--verdicts must be "fixed" or "content", got "${verdicts}"`);
  // The flag wins over the env var so a one-off run can override a shell default.
  const port = toInt("--port", values.port) ?? toInt("JUDGE_DOUBLE_PORT", process.env.JUDGE_DOUBLE_PORT) ?? 4010;
  const double = await startJudgeDouble({
    port,
    host: values.host ?? process.env.JUDGE_DOUBLE_HOST ?? "127.0.0.1",
    seed: toInt("--seed", values.seed),
    requireApiKey: values["require-api-key"],
    defaultBehaviour: verdicts === "content" ? { kind: "content" } : undefined,
    logger: (line) => console.log(line),
  });
  console.log(double.baseURL);
  console.log(
    verdicts === "content"
      ? "judge test double: verdicts scored from features of the text (deterministic) — a stand-in, not a model"
      : "judge test double: the same canned verdict for every prompt (--verdicts content varies them) — a stand-in, not a model",
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`judge test double stopping (${signal})`);
    double.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((err: unknown) => {
  console.error(`judge test double failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
