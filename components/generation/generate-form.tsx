"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Field, Input } from "@/components/ui/field";
import { Select } from "@/components/ui/select";
import { ApiError, apiFetch } from "@/lib/client/api";
import type { Generation, GenerationEstimate } from "@/lib/schemas/generations";
import type { Target } from "@/lib/schemas/targets";

const NEW = "new";
const modes = [
  { value: "simulate", label: "Simulate — a model plays the user from each conversation's scenario" },
  { value: "replay", label: "Replay — the source's user turns, sent one after another" },
  { value: "next_turn", label: "Next turn — each assistant turn answered again from its history" },
] as const;

/** Pick a target (or add an openai_chat one here), a mode, repeats and max_turns; start the generation and follow it. */
export function GenerateForm({ datasetId, targets }: { datasetId: number; targets: Target[] }) {
  const router = useRouter();
  const [known, setKnown] = useState(targets);
  const [targetId, setTargetId] = useState<string>(targets[0] ? String(targets[0].id) : NEW);
  const [newTarget, setNewTarget] = useState({ name: "", url: "", model: "", key_env: "" });
  const [mode, setMode] = useState<(typeof modes)[number]["value"]>("simulate");
  const [repeats, setRepeats] = useState("1");
  const [maxTurns, setMaxTurns] = useState("10");
  const [scenarioPath, setScenarioPath] = useState("");
  const [filter, setFilter] = useState("");
  const [error, setError] = useState<{ message: string; path?: string } | null>(null);
  const [estimate, setEstimate] = useState<GenerationEstimate | null>(null);
  const [busy, setBusy] = useState(false);

  async function chosenTarget(): Promise<number> {
    if (targetId !== NEW) return Number(targetId);
    const headers = newTarget.key_env.trim() ? { authorization: `Bearer \${env:${newTarget.key_env.trim()}}` } : undefined;
    const { data } = await apiFetch<Target>("/targets", { method: "POST", json: { name: newTarget.name.trim(), kind: "openai_chat", url: newTarget.url.trim(), model: newTarget.model.trim() || undefined, headers } });
    // Made once: from now on it is one of the targets to pick, and chosen.
    setKnown((list) => [...list, data]);
    setTargetId(String(data.id));
    return data.id;
  }

  const body = (target: number, dryRun: boolean) => ({
    source_dataset_id: datasetId,
    target_id: target,
    mode,
    repeats: Number(repeats),
    // Simulate only: replay and next turn follow the source's turns.
    ...(mode === "simulate" ? { max_turns: Number(maxTurns) } : {}),
    ...(mode === "simulate" && scenarioPath.trim() ? { simulator: { scenario_path: scenarioPath.trim() } } : {}),
    ...(filter.trim() ? { filter: filter.trim() } : {}),
    dry_run: dryRun,
  });

  async function submit(dryRun: boolean) {
    setBusy(true);
    setError(null);
    try {
      const target = await chosenTarget();
      if (dryRun) setEstimate((await apiFetch<GenerationEstimate>("/generations", { method: "POST", json: body(target, true) })).data);
      else {
        const { data } = await apiFetch<Generation>("/generations", { method: "POST", json: body(target, false) });
        router.push(`/datasets/${datasetId}/generate?generation=${data.id}`);
      }
    } catch (e) {
      setError(e instanceof ApiError ? { message: e.message, path: e.details[0]?.path } : { message: String(e) });
    } finally {
      setBusy(false);
    }
  }

  const fieldError = (path: string) => (error?.path === path || error?.path?.startsWith(`${path}.`) ? error.message : undefined);
  return (
    <Card>
      <CardHeader title="Generate conversations" description="Send this dataset's conversations to the agent you are about to ship. Each result is an ordinary conversation of a new dataset, linked to its source." />
      <form
        className="grid gap-4 p-5 sm:grid-cols-2"
        onSubmit={(e) => {
          e.preventDefault();
          void submit(false);
        }}
      >
        <Field id="target" label="Target" hint="The agent or model to test" error={fieldError("target_id")}>
          <Select id="target" value={targetId} onChange={(e) => setTargetId(e.target.value)}>
            {known.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name} ({t.kind}{t.model ? ` · ${t.model}` : ""})
              </option>
            ))}
            <option value={NEW}>New OpenAI-compatible model…</option>
          </Select>
        </Field>
        <Field id="mode" label="Mode">
          <Select id="mode" value={mode} onChange={(e) => setMode(e.target.value as typeof mode)}>
            {modes.map((m) => (
              <option key={m.value} value={m.value}>
                {m.label}
              </option>
            ))}
          </Select>
        </Field>
        {targetId === NEW ? (
          <fieldset className="grid gap-4 rounded-md border border-slate-200 p-4 sm:col-span-2 sm:grid-cols-2">
            <legend className="px-1 text-sm font-medium text-slate-700">New openai_chat target</legend>
            <Field id="target-name" label="Name" error={fieldError("name")}>
              <Input id="target-name" required value={newTarget.name} onChange={(e) => setNewTarget({ ...newTarget, name: e.target.value })} />
            </Field>
            <Field id="target-url" label="Base URL" hint="A Chat Completions endpoint, e.g. http://localhost:8000/v1" error={fieldError("url")}>
              <Input id="target-url" required value={newTarget.url} onChange={(e) => setNewTarget({ ...newTarget, url: e.target.value })} />
            </Field>
            <Field id="target-model" label="Model" error={fieldError("model")}>
              <Input id="target-model" value={newTarget.model} onChange={(e) => setNewTarget({ ...newTarget, model: e.target.value })} />
            </Field>
            <Field id="target-key" label="API key variable (optional)" hint="The name of a server environment variable an admin listed in TARGET_SECRET_ENV; sent as a bearer token, never shown" error={fieldError("headers")}>
              <Input id="target-key" placeholder="MY_AGENT_KEY" value={newTarget.key_env} onChange={(e) => setNewTarget({ ...newTarget, key_env: e.target.value })} />
            </Field>
          </fieldset>
        ) : null}
        <Field id="repeats" label="Repeats" hint="Each conversation this many times: pass^k and pass@k on the comparison" error={fieldError("repeats")}>
          <Input id="repeats" type="number" min={1} max={10} value={repeats} onChange={(e) => setRepeats(e.target.value)} />
        </Field>
        {mode === "simulate" ? (
          <Field id="max-turns" label="Max turns" hint="User turns at most" error={fieldError("max_turns")}>
            <Input id="max-turns" type="number" min={1} max={50} value={maxTurns} onChange={(e) => setMaxTurns(e.target.value)} />
          </Field>
        ) : null}
        {mode === "simulate" ? (
          <Field id="scenario" label="Scenario path (optional)" hint="Where each conversation's scenario is, e.g. meta.info.task.instruction; else its goal" error={fieldError("simulator")}>
            <Input id="scenario" placeholder="meta.info.task.instruction" value={scenarioPath} onChange={(e) => setScenarioPath(e.target.value)} />
          </Field>
        ) : null}
        <Field id="filter" label="Only conversations matching (optional)" hint="The grid's filter, e.g. meta.reward==0" error={fieldError("filter")}>
          <Input id="filter" value={filter} onChange={(e) => setFilter(e.target.value)} />
        </Field>
        {error && !["target_id", "name", "url", "model", "repeats", "max_turns", "filter"].some((p) => fieldError(p)) && !fieldError("simulator") ? (
          <p role="alert" className="text-sm text-red-600 sm:col-span-2">
            {error.message}
          </p>
        ) : null}
        {estimate ? (
          <div className="text-sm text-slate-600 sm:col-span-2" data-testid="estimate">
            <p>
            Would make {estimate.conversations} conversations: {estimate.target_calls} target calls
            {estimate.simulator_calls ? `, up to ${estimate.simulator_calls} simulator calls` : ""}, about {(estimate.estimated_input_tokens + estimate.estimated_output_tokens).toLocaleString()} tokens,{" "}
            {estimate.estimated_cost_usd === null ? "cost unknown" : `$${estimate.estimated_cost_usd.toFixed(4)}`}
            {estimate.estimated_cost_usd_high !== null && estimate.estimated_cost_usd !== null && estimate.estimated_cost_usd_high > estimate.estimated_cost_usd
              ? `, up to $${estimate.estimated_cost_usd_high.toFixed(4)} if every reply is as long as the source's longest`
              : ""}
            .
            </p>
            {/* The API's notes, one a line as sentences (they ran together, one led by its field name). */}
            <ul className="mt-1 list-disc space-y-0.5 pl-5 text-xs text-slate-500" data-testid="estimate-notes">
              {estimate.notes
                .slice(1)
                .filter((n) => !n.startsWith("estimated_cost_usd_high:") || (estimate.estimated_cost_usd_high !== null && estimate.estimated_cost_usd !== null))
                .map((n) => noteSentence(n.replace(/^estimated_cost_usd_high: /, "the higher cost: ")))
                .map((n) => (
                  <li key={n}>{n}</li>
                ))}
            </ul>
          </div>
        ) : null}
        <div className="flex gap-3 sm:col-span-2">
          <Button type="submit" disabled={busy} needs="annotator">
            Generate
          </Button>
          <Button variant="secondary" disabled={busy} onClick={() => void submit(true)} needs="annotator">
            Estimate first
          </Button>
          {targetId === NEW ? (
            // The estimate prices the target's model, so a new target is saved first: said, not done quietly (issue 51).
            <p className="self-center text-xs text-slate-500" data-testid="estimate-saves-target">
              Estimating or generating saves the new target first (it is then one of the targets to pick).
            </p>
          ) : null}
        </div>
      </form>
    </Card>
  );
}

/** An estimate note as a sentence: a capital first, a full stop last. */
function noteSentence(note: string): string {
  const text = note.trim();
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? "" : "."}`;
}
