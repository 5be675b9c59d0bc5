"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/field";
import type { AnyImportMapping, SavedMapping } from "@/lib/schemas/imports";

const queryKey = ["import-mappings"];

/** The caller's saved import mappings (`GET /api/import-mappings`). */
export function useSavedMappings() {
  return useQuery({
    queryKey,
    queryFn: async (): Promise<SavedMapping[]> => {
      const res = await fetch("/api/import-mappings");
      if (!res.ok) throw new Error(`The server answered ${res.status}`);
      return (await res.json()) as SavedMapping[];
    },
  });
}

const selectClass = "block h-9 w-full rounded-md border border-slate-300 bg-white px-2 text-sm shadow-sm";

/** Pick a saved mapping; nothing is shown until the user has saved one. */
export function SavedMappingPicker({
  id,
  label,
  emptyOption,
  value,
  onPick,
}: {
  id: string;
  label: string;
  emptyOption: string;
  value: string;
  onPick: (saved: SavedMapping | undefined) => void;
}) {
  const saved = useSavedMappings();
  if (!saved.data?.length) return null;
  return (
    <label htmlFor={id} className="block text-xs font-medium text-slate-700">
      {label}
      <select
        id={id}
        value={value}
        onChange={(e) => onPick(saved.data.find((m) => String(m.id) === e.target.value))}
        className={`mt-1 ${selectClass}`}
      >
        <option value="">{emptyOption}</option>
        {saved.data.map((m) => (
          <option key={m.id} value={m.id}>
            {m.name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Save the mapping being edited under a name; saving a name again replaces that mapping. */
export function SaveMapping({ mapping }: { mapping: AnyImportMapping | null }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const save = useMutation({
    mutationFn: async (body: { name: string; mapping: AnyImportMapping }) => {
      const res = await fetch("/api/import-mappings", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = (await res.json().catch(() => null)) as (SavedMapping & { error?: { message?: string } }) | null;
      if (!res.ok) throw new Error(answer?.error?.message ?? `The server answered ${res.status}`);
      return { saved: answer as SavedMapping, replaced: res.status === 200 };
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey }),
  });
  const trimmed = name.trim();
  return (
    <div className="space-y-1" data-testid="save-mapping">
      <div className="flex items-end gap-2">
        <label htmlFor="save-mapping-name" className="block flex-1 text-xs font-medium text-slate-700">
          Save this mapping as
          <Input
            id="save-mapping-name"
            className="mt-1"
            value={name}
            maxLength={200}
            placeholder="e.g. Support export"
            onChange={(e) => {
              setName(e.target.value);
              save.reset();
            }}
          />
        </label>
        <Button
          needs="annotator"
          type="button"
          variant="secondary"
          disabled={!mapping || !trimmed || save.isPending}
          onClick={() => mapping && save.mutate({ name: trimmed, mapping })}
        >
          {save.isPending ? "Saving…" : "Save mapping"}
        </Button>
      </div>
      {save.isSuccess ? (
        <p role="status" className="text-xs text-emerald-700">
          {save.data.replaced ? "Replaced" : "Saved"} “{save.data.saved.name}”: pick it under “Read the file with” for the next file of this shape.
        </p>
      ) : null}
      {save.isError ? (
        <p role="alert" className="text-xs text-red-700">
          Not saved: {save.error.message}
        </p>
      ) : null}
    </div>
  );
}
