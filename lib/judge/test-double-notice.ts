/**
 * Whether the configured judge is the judge TEST DOUBLE (lib/testing/judge-double), so every page can say
 * plainly that its verdicts are scripted, not a model's (issue 51: with the double, agreement, alignment
 * and comparisons showed figures nothing said were made up). The double answers `GET /v1/models` with
 * `owned_by: "judge-test-double"`; a real provider never does. Asked once per address and remembered
 * (a failed probe is asked again after a minute); never longer than `waitMs` on a page's path.
 */
import { getJudgeConfig } from "./config";

type Probe = { at: number; answer: Promise<boolean>; settled: boolean | undefined };
const probes = new Map<string, Probe>();
const RETRY_MS = 60_000;

async function ask(baseURL: string, apiKey: string | undefined): Promise<boolean> {
  const res = await fetch(`${baseURL.replace(/\/+$/, "")}/models`, {
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    signal: AbortSignal.timeout(3_000),
  });
  if (!res.ok) return false;
  const body = (await res.json()) as { data?: Array<{ owned_by?: unknown }> };
  return Array.isArray(body.data) && body.data.some((m) => m?.owned_by === "judge-test-double");
}

/** True when the judge is the test double; false when it is not, unknown yet or unreachable within `waitMs`. */
export async function judgeIsTestDouble(waitMs = 1_500): Promise<boolean> {
  const { baseURL, apiKey } = getJudgeConfig();
  if (!baseURL) return false; // the provider's own default address: a real provider
  let probe = probes.get(baseURL);
  if (!probe || (probe.settled !== true && Date.now() - probe.at > RETRY_MS)) {
    const fresh: Probe = { at: Date.now(), settled: undefined, answer: Promise.resolve(false) };
    fresh.answer = ask(baseURL, apiKey).then(
      (yes) => (fresh.settled = yes),
      () => (fresh.settled = false),
    );
    probes.set(baseURL, fresh);
    probe = fresh;
  }
  if (probe.settled !== undefined) return probe.settled;
  return Promise.race([probe.answer, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), waitMs).unref())]);
}

/** Tests: forget what was learnt. */
export function forgetJudgeProbes(): void {
  probes.clear();
}
