/** What the OTLP exporting client (otel-ingest-client.ts) prints, read line by line by the trace benches. */
import type { ChildProcess } from "node:child_process";
import { onStdoutLines } from "@/lib/testing/setup/child-events";

/**
 * Follow the client's stdout: `onProgress` for each `PROGRESS <spans>` line at or past every tenth of
 * `spans`, and resolve with its `CLIENT_RESULT {…}` figures once it exits (an error if it printed none).
 */
export function clientFigures(client: ChildProcess, spans: number, onProgress: (sent: number) => void): Promise<Record<string, number>> {
  let result: Record<string, number> | undefined;
  let nextSample = spans / 10;
  onStdoutLines(client, (line) => {
    const progress = /^PROGRESS (\d+)/.exec(line);
    if (progress && Number(progress[1]) >= nextSample) {
      onProgress(Number(progress[1]));
      nextSample += spans / 10;
    }
    if (line.startsWith("CLIENT_RESULT ")) result = JSON.parse(line.slice("CLIENT_RESULT ".length)) as Record<string, number>;
  });
  return new Promise((resolve, reject) =>
    client.on("exit", () => (result ? resolve(result) : reject(new Error("the exporting client printed no figures")))),
  );
}
