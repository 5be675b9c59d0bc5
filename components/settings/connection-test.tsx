"use client";

import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { Field, Input } from "@/components/ui/field";
import { ApiError, apiFetch } from "@/lib/client/api";

type ConnectionTest = { ok: boolean; model: string; latency_ms: number; message: string; concurrency_limit: number };

/** "Test connection": one small judge call through the same path as every verdict. */
export function ConnectionTest({ defaultModel }: { defaultModel: string }) {
  const [model, setModel] = useState("");
  const test = useMutation({
    mutationFn: async () =>
      (await apiFetch<ConnectionTest>("/settings/judge/test", { method: "POST", json: model.trim() ? { model_name: model.trim() } : {} })).data,
  });
  const fieldError = test.error instanceof ApiError ? test.error.details.find((d) => d.path === "model_name")?.message : undefined;

  function submit(e: FormEvent) {
    e.preventDefault();
    test.mutate();
  }

  return (
    <form onSubmit={submit} className="space-y-4" aria-label="Test the judge connection">
      <Field id="test-model" label="Model to test" hint={`Empty tests the default model, ${defaultModel}`} error={fieldError}>
        <Input id="test-model" value={model} maxLength={200} placeholder={defaultModel} onChange={(e) => setModel(e.target.value)} aria-invalid={!!fieldError} />
      </Field>
      <Button needs="annotator" type="submit" disabled={test.isPending}>
        {test.isPending ? "Testing…" : "Test connection"}
      </Button>
      {test.data ? (
        <div
          role="status"
          data-testid="connection-result"
          className={test.data.ok ? "rounded-md bg-emerald-50 px-4 py-3 text-sm text-emerald-800 ring-1 ring-inset ring-emerald-200" : "rounded-md bg-red-50 px-4 py-3 text-sm text-red-800 ring-1 ring-inset ring-red-200"}
        >
          <p className="font-medium">
            {test.data.ok ? "Connected" : "Connection failed"} · {test.data.model} · {test.data.latency_ms} ms
          </p>
          <p className="mt-0.5 whitespace-pre-wrap break-words">{test.data.message}</p>
        </div>
      ) : null}
      {test.error && !fieldError ? (
        <p role="alert" className="text-sm text-red-700">
          {test.error.message}
        </p>
      ) : null}
    </form>
  );
}
