/** Datasets, metrics and runs for the reliability suite, all through the public HTTP API. */
import type { TurnscopeServer } from "./server";

export type Check = { name: string; ok: boolean; detail?: string };

export function check(checks: Check[], name: string, ok: boolean, detail?: unknown): boolean {
  checks.push({ name, ok, ...(ok || detail === undefined ? {} : { detail: typeof detail === "string" ? detail : JSON.stringify(detail).slice(0, 500) }) });
  return ok;
}

/** `n` agent conversations: a user turn and an assistant turn with a tool call and its result (4 cells each with 3 metrics). */
export function agentConversations(n: number, tag = "c") {
  // The tag is in every text the judge sees, so datasets never share verdicts through the judge cache.
  return {
    conversations: Array.from({ length: n }, (_, i) => ({
      name: `${tag}-${i}`,
      meta: { i },
      agents: [{ name: "agent", tools: { lookup: { name: "lookup", parameters: { q: "string" } } } }],
      messages: [
        { role: "user", content: `Question ${i}: what is item ${tag}-${i}?` },
        {
          role: "assistant",
          content: `Item ${tag}-${i} is a widget.`,
          steps: [
            { tool_call: { name: "lookup", arguments: { q: `item ${tag}-${i}` } }, agent_name: "agent" },
            { tool_result: { found: true, id: `${tag}-${i}` }, output_content: `widget ${tag}-${i}` },
          ],
        },
      ],
    })),
  };
}

export async function importDataset(server: TurnscopeServer, name: string, data: unknown): Promise<{ datasetId: number; status: number }> {
  const form = new FormData();
  form.set("file", new Blob([JSON.stringify(data)], { type: "application/json" }), `${name}.json`);
  form.set("name", name);
  form.set("user_id", "reliability");
  form.set("get_feedback", "false");
  const res = await server.request("POST", "/api/datasets/import", form);
  if (res.status !== 201) throw new Error(`import of ${name} failed: ${res.status} ${res.text.slice(0, 300)}`);
  return { datasetId: res.json.dataset_id as number, status: res.status };
}

export async function addMetrics(server: TurnscopeServer, datasetId: number): Promise<{ conv: number; msg: number; step: number }> {
  const make = async (level: string, prompt: string) => {
    const res = await server.request("POST", "/api/evaluation-pipeline-nodes", {
      dataset_id: datasetId,
      name: `${level} quality`,
      evaluation_level: level,
      prompt,
      output_type: "progress",
    });
    if (res.status !== 201) throw new Error(`metric: ${res.status} ${res.text}`);
    return res.json.id as number;
  };
  return {
    conv: await make("conversation", "Rate the whole conversation.\n@HISTORY"),
    msg: await make("message", "Rate this answer: @CURRENT_MESSAGE.output to @CURRENT_MESSAGE.input"),
    step: await make("step", "Rate step @STEP_NUMBER: @CURRENT_STEP.tool_call / @CURRENT_STEP.tool_result"),
  };
}

export type Execution = {
  id: number;
  status: string;
  total_evaluations: number;
  successful_evaluations: number;
  failed_evaluations: number;
  duration_ms?: number | null;
  meta?: Record<string, unknown>;
  errors: Array<{ message: string }>;
};

export async function startRun(server: TurnscopeServer, body: Record<string, unknown>): Promise<Execution> {
  const res = await server.request("POST", "/api/evaluation-pipeline-executions/run", body);
  if (res.status !== 202) throw new Error(`run: ${res.status} ${res.text}`);
  return res.json as Execution;
}

export async function waitFinal(server: TurnscopeServer, id: number, timeoutMs: number): Promise<Execution> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await server.request("GET", `/api/evaluation-pipeline-executions/${id}`);
    if (["completed", "failed", "cancelled"].includes(res.json?.status)) return res.json as Execution;
    if (Date.now() > deadline) throw new Error(`execution ${id} still ${res.json?.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Latest status of every cell of a dataset at one level, via the grid endpoint (paged). */
export async function gridCells(server: TurnscopeServer, datasetId: number, level: string): Promise<Map<string, string>> {
  const cells = new Map<string, string>();
  for (let offset = 0; ; offset += 500) {
    const res = await server.request("GET", `/api/datasets/${datasetId}/grid?level=${level}&limit=500&offset=${offset}`);
    if (res.status !== 200) throw new Error(`grid: ${res.status} ${res.text.slice(0, 200)}`);
    for (const row of res.json as Array<{ entity_id: number; cells: Record<string, { status: string }> }>) {
      for (const [node, cell] of Object.entries(row.cells)) cells.set(`${node}:${level}:${row.entity_id}`, cell.status);
    }
    if ((res.json as unknown[]).length < 500) break;
  }
  return cells;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, i)] * 10) / 10;
}

/** A person with a role and an API key of their own, made with the server's admin credential: the headers their requests carry. */
export async function personWithKey(server: TurnscopeServer, name: string, role: string): Promise<{ authorization: string }> {
  const user = await server.request("POST", "/api/users", { name, role });
  const key = await server.request("POST", `/api/users/${user.json?.id}/keys`, { name: "reliability" });
  return { authorization: `Bearer ${String(key.json?.key)}` };
}
