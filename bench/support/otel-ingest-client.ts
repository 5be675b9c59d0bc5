/**
 * The exporting side of bench/otel-ingest.bench.ts and bench/otel-served.bench.ts, in its own process:
 * the agents' spans of bench/support/otel-spans.ts sent as OTLP protobuf in batches of 512 spans. Two modes:
 *  - rate 0 (closed loop): two exports in flight, each sent as soon as the last one of its sender was
 *    answered, like two services' batch span processors pushing as fast as the server takes them — the
 *    most the server ingests (its latency then is the queue it builds, not what a user sees);
 *  - rate R spans/s (open loop): an export every 512/R s whether or not the earlier ones were answered
 *    (at most 64 in flight), latency counted from when it was due — what exporters sending R spans/s
 *    see (no coordinated omission: a late send counts as late). Each body is encoded before it is due, as
 *    an exporter's batch is before it is sent; the five slowest exports are reported with when they were due.
 * argv: url, total spans, rate (default 0). Prints one JSON line of figures.
 */
import { BATCH, batch } from "./otel-spans";

const url = process.argv[2];
const totalSpans = Number(process.argv[3]);
const rate = Number(process.argv[4] ?? 0);
const IN_FLIGHT = 2;
const OPEN_LOOP_MAX_IN_FLIGHT = 64;

async function main() {
  const latencies: number[] = [];
  /** Open loop: when each export was due (s from the start) and its latency, for the slowest ones' report. */
  const timeline: Array<{ at_s: number; ms: number }> = [];
  let sent = 0;
  let failed = 0;
  // Open loop: the first body is encoded before the clock starts (the encoder's first use loads its definitions), as every later one is before it is due.
  const first = rate > 0 ? batch() : undefined;
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
  /** Open loop: export i is due at started + i × 512/rate s; its latency runs from then. */
  const scheduled = async () => {
    const every = (BATCH / rate) * 1000;
    const pending = new Set<Promise<void>>();
    for (let i = 0; i * BATCH < totalSpans; i++) {
      const due = started + i * every;
      // Encoded before it is due (an SDK's exporter encodes its batch before it sends): the latency is the server's and the network's.
      const body = i === 0 && first ? first : batch();
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      while (pending.size >= OPEN_LOOP_MAX_IN_FLIGHT) await Promise.race(pending);
      const p = (async () => {
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/x-protobuf" }, body: Buffer.from(body) });
        await res.arrayBuffer();
        latencies.push(performance.now() - due);
        timeline.push({ at_s: Math.round((due - started) / 100) / 10, ms: Math.round(performance.now() - due) });
        if (res.status !== 200) failed++;
        if (latencies.length % 20 === 0) process.stdout.write(`PROGRESS ${latencies.length * BATCH}\n`);
      })();
      pending.add(p);
      void p.finally(() => pending.delete(p));
    }
    await Promise.all(pending);
  };
  if (rate > 0) await scheduled();
  else await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const wall = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] * 10) / 10;
  process.stdout.write(
    `CLIENT_RESULT ${JSON.stringify({ offered_spans_per_second: rate > 0 ? rate : null, spans: latencies.length * BATCH, exports: latencies.length, failed, wall_ms: Math.round(wall), spans_per_second: Math.round(((latencies.length * BATCH) / wall) * 1000), export_ms_p50: pct(50), export_ms_p99: pct(99), export_ms_max: pct(100), ...(timeline.length ? { slowest_exports: timeline.sort((a, b) => b.ms - a.ms).slice(0, 5) } : {}) })}\n`,
  );
}

void main();
