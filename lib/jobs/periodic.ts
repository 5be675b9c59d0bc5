/**
 * Periodic background passes (lib/jobs): a pass every `everyMs`, never two at once (a slow pass is not
 * overlapped by the next), its failure logged and the next one tried; `stop()` (shutdown) ends the timer and
 * waits for a pass in progress, which may ask `stopping()` to end early. The timers keep no process alive.
 * The lease sweeps of the job kinds, the online rules' sweep, the trace store's retention and the trace inbox use it.
 * Its state is a process singleton named `name` (one per process however many bundles load the caller).
 */
import "server-only";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-state";

export type Periodic = {
  /** Start passing every `everyMs` (idempotent; an interval ≤ 0 leaves it off). */
  start(): void;
  /** Stop passing and wait for a pass in progress. */
  stop(): Promise<void>;
  /** Whether stop() was called: a long pass ends between two of its steps. */
  stopping(): boolean;
};

export function definePeriodic(
  name: string,
  spec: {
    everyMs: () => number;
    /** A first pass this long after start (0: at once); without it, the first comes after `everyMs`. */
    firstAfterMs?: number;
    pass: () => Promise<unknown>;
    /** What the log says when a pass throws. */
    failed: string;
  },
): Periodic {
  const loop = processSingleton(name, () => ({ timer: undefined as NodeJS.Timeout | undefined, running: undefined as Promise<unknown> | undefined, stopping: false }));
  const pass = () => {
    if (loop.running || loop.stopping) return;
    loop.running = spec
      .pass()
      .catch((error: unknown) => log.error(spec.failed, { error: (error as Error).message }))
      .finally(() => (loop.running = undefined));
  };
  return {
    start() {
      const every = spec.everyMs();
      if (loop.timer || every <= 0) return;
      loop.stopping = false;
      loop.timer = setInterval(pass, every);
      loop.timer.unref();
      if (spec.firstAfterMs === 0) pass();
      else if (spec.firstAfterMs !== undefined) setTimeout(pass, spec.firstAfterMs).unref();
    },
    async stop() {
      loop.stopping = true;
      if (loop.timer) clearInterval(loop.timer);
      loop.timer = undefined;
      await loop.running;
    },
    stopping: () => loop.stopping,
  };
}
