/**
 * Micro-benchmark of OTLP protobuf decoding alone: `decodeExportBody` (lib/otel/decode.ts) on the export
 * bodies of bench/otel-ingest.bench.ts (bench/support/otel-spans.ts: GenAI agent spans, 512 an export, the
 * chat spans carrying the growing history), in this process, no server, no store. Prints the CPU time per
 * span of each repetition and their median.
 *
 *   npx tsx --conditions=react-server bench/support/decode-micro.ts [module] [repetitions] [exports]
 *
 * `module` (default `@/lib/otel/decode`) is any file exporting the same `decodeExportBody`, e.g. an earlier
 * decode.ts copied where git and tsc do not look, its relative imports made absolute:
 *   mkdir -p test-results/before && git show REV:lib/otel/decode.ts | sed 's#"\./#"@/lib/otel/#' > test-results/before/decode.ts
 * then `… decode-micro.ts ./test-results/before/decode.ts`, so two versions are measured alternately in one
 * sitting. Repetitions default to 9, exports (of 512 spans) to 40.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { loadavg } from "node:os";
import { BATCH, batch } from "./otel-spans";
import type { ExportBody, DecodedExport } from "@/lib/otel/decode";

async function main() {
  const target = process.argv[2] ?? "@/lib/otel/decode";
  const repetitions = Number(process.argv[3] ?? 9);
  const exports = Number(process.argv[4] ?? 40);
  const specifier = target.startsWith(".") || target.startsWith("/") ? pathToFileURL(path.resolve(target)).href : target;
  const { decodeExportBody } = (await import(specifier)) as { decodeExportBody: (body: ExportBody) => DecodedExport };

  // 40 exports of 512 spans: 5,120 agent turns, histories of every length the bench sends.
  const bodies = Array.from({ length: exports }, () => batch());
  const decodeAll = () => {
    let spans = 0;
    for (const bytes of bodies) spans += decodeExportBody({ bytes, encoding: "protobuf", gzip: false, maxBytes: 64 << 20, maxDepth: 64 }).spans.length;
    return spans;
  };
  // Warm up: the .proto load and the JIT.
  for (let i = 0; i < 3; i++) if (decodeAll() !== exports * BATCH) throw new Error("decoded fewer spans than sent");

  const perSpan: number[] = [];
  for (let r = 0; r < repetitions; r++) {
    const cpu = process.cpuUsage();
    const spans = decodeAll();
    const used = process.cpuUsage(cpu);
    perSpan.push((used.user + used.system) / spans);
  }
  const sorted = [...perSpan].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const bytes = bodies.reduce((n, b) => n + b.length, 0);
  process.stdout.write(
    `${JSON.stringify({
      module: target,
      exports,
      spans_per_export: BATCH,
      bytes_per_span: Math.round(bytes / (exports * BATCH)),
      us_per_span: perSpan.map((v) => Math.round(v * 100) / 100),
      median_us_per_span: Math.round(median * 100) / 100,
      load_average: loadavg().map((v) => Math.round(v * 100) / 100),
    })}\n`,
  );
}

void main();
