"use client";

import { useEffect, useState } from "react";
import { Button } from "@/components/ui/button";
import { fixedFileName, fixUploadText } from "@/lib/import/fix-upload";
import type { SuggestedTransformation } from "@/lib/schemas/imports";

type Prepared = { state: "preparing" } | { state: "ready"; file: File; summary: string } | { state: "unavailable"; reason: string };

function summarise(renamed: number, mapped: number, conflicts: number): string {
  const parts = [];
  if (renamed) parts.push(`renames ${renamed} field${renamed === 1 ? "" : "s"}`);
  if (mapped) parts.push(`replaces ${mapped} value${mapped === 1 ? "" : "s"}`);
  const skipped = conflicts ? `; ${conflicts} object${conflicts === 1 ? " already has" : "s already have"} the target field and stay as they are` : "";
  return `The fix ${parts.join(" and ")}${skipped}.`;
}

/**
 * The failure view's way out: apply the suggested transformation to the uploaded file (in the browser,
 * on the file already chosen) and import the result, or download it to look at first.
 */
export function ApplyFix({
  file,
  transformation,
  pending,
  onImport,
}: {
  file: File;
  transformation: SuggestedTransformation;
  pending: boolean;
  onImport: (fixed: File) => void;
}) {
  const [prepared, setPrepared] = useState<Prepared>({ state: "preparing" });

  // Prepared up front so the buttons only appear when the fix applies to this file.
  useEffect(() => {
    let live = true;
    file
      .text()
      .then((text) => {
        const fixed = fixUploadText(text, transformation);
        if (!live) return;
        setPrepared(
          fixed.ok
            ? {
                state: "ready",
                file: new File([fixed.text], fixedFileName(file.name), { type: "application/json" }),
                summary: summarise(fixed.renamed, fixed.mapped, fixed.conflicts),
              }
            : { state: "unavailable", reason: fixed.reason },
        );
      })
      .catch((error: unknown) => {
        if (live) setPrepared({ state: "unavailable", reason: `The file could not be read again: ${(error as Error).message}` });
      });
    return () => {
      live = false;
    };
  }, [file, transformation]);

  function download(fixed: File) {
    const url = URL.createObjectURL(fixed);
    const a = document.createElement("a");
    a.href = url;
    a.download = fixed.name;
    document.body.append(a);
    a.click();
    a.remove();
    // Revoked on the next turn: the click has handed the URL to the download by then.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }

  if (prepared.state === "preparing") return null;
  if (prepared.state === "unavailable") {
    return (
      <p className="text-xs text-slate-500" data-testid="fix-unavailable">
        {prepared.reason}
      </p>
    );
  }
  return (
    <div className="space-y-2 border-t border-slate-100 pt-4" data-testid="apply-fix">
      <p className="text-xs text-slate-600">
        {prepared.summary} The result is imported as <span className="font-mono">{prepared.file.name}</span> into the same dataset choice.
      </p>
      <div className="flex flex-wrap gap-2">
        <Button needs="annotator" size="sm" disabled={pending} onClick={() => onImport(prepared.file)}>
          {pending ? "Importing…" : "Apply the suggested fix and import"}
        </Button>
        <Button size="sm" variant="secondary" onClick={() => download(prepared.file)}>
          Download the fixed file
        </Button>
      </div>
    </div>
  );
}
