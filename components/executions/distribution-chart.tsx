"use client";

import { Bar, BarChart, CartesianGrid, Cell, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { OutputType } from "@/lib/vocabulary";

const progressColours = ["#ef4444", "#f97316", "#f59e0b", "#84cc16", "#10b981"];

function colourFor(type: OutputType, label: string, i: number): string {
  if (type === "checkbox") return label === "true" ? "#10b981" : "#ef4444";
  if (type === "progress") return progressColours[i] ?? "#4f6ef7";
  return "#4f6ef7";
}

function displayLabel(type: OutputType, label: string): string {
  if (type === "checkbox") return label === "true" ? "Pass" : "Fail";
  return label;
}

/** A metric's score distribution (the aggregate's bins) as bars. */
export function DistributionChart({ type, distribution, name }: { type: OutputType; distribution: Record<string, number>; name: string }) {
  const data = Object.entries(distribution).map(([bin, count], i) => ({ bin: displayLabel(type, bin), count, fill: colourFor(type, bin, i) }));
  if (data.length === 0) return <p className="py-8 text-center text-sm text-slate-400">No scores to chart for this output type.</p>;
  return (
    <figure aria-label={`Distribution of ${name}`} data-testid="distribution-chart" className="h-44 w-full">
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -20 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
          <XAxis dataKey="bin" tick={{ fontSize: 11, fill: "#64748b" }} tickLine={false} axisLine={{ stroke: "#cbd5e1" }} />
          <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: "#64748b" }} tickLine={false} axisLine={false} />
          <Tooltip cursor={{ fill: "#f1f5f9" }} formatter={(v) => [String(v), "results"]} />
          <Bar dataKey="count" radius={[4, 4, 0, 0]} isAnimationActive={false}>
            {data.map((d) => (
              <Cell key={d.bin} fill={d.fill} />
            ))}
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}
