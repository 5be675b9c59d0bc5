/**
 * The exporting side of lib/otel/ingest.bench.ts, in its own process: the agents' spans of
 * lib/otel/bench-spans.ts sent as OTLP protobuf in batches of 512 spans, two exports in flight, like two
 * services' batch span processors. Prints one JSON line of figures.
 */
import { BATCH, batch } from "./bench-spans";

const url = process.argv[2];
const totalSpans = Number(process.argv[3]);
const IN_FLIGHT = 2;

async function main() {
  const latencies: number[] = [];
  let sent = 0;
  let failed = 0;
  const started = performance.now();
  const worker = async () => {
    while (sent < totalSpans) {
      sent += BATCH;
      const body = batch();
      const t = performance.now();
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/x-protobuf" }, body: Buffer.from(body) });
      await res.arrayBuffer();
      latencies.push(performance.now() - t);
      if (res.status !== 200) failed++;
      if (latencies.length % 20 === 0) process.stdout.write(`PROGRESS ${latencies.length * BATCH}\n`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const wall = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] * 10) / 10;
  process.stdout.write(
    `CLIENT_RESULT ${JSON.stringify({ spans: latencies.length * BATCH, exports: latencies.length, failed, wall_ms: Math.round(wall), spans_per_second: Math.round(((latencies.length * BATCH) / wall) * 1000), export_ms_p50: pct(50), export_ms_p99: pct(99), export_ms_max: pct(100) })}\n`,
  );
}

void main();
