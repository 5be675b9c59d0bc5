// `npm start`: install if needed, build if needed, then serve. The database is created and migrated
// by the server itself when it starts (instrumentation.ts → db/client.ts).
import { spawn } from "node:child_process";
import { ensureBuild, ensureDependencies, nextBin, root } from "./project.mjs";

ensureDependencies();
ensureBuild();

const port = process.env.PORT ?? "3000";
const hostname = process.env.HOSTNAME_BIND ?? "0.0.0.0";
console.log(`▸ Serving Turnscope on http://localhost:${port}`);
const child = spawn(process.execPath, [nextBin, "start", "-p", port, "-H", hostname], {
  cwd: root,
  stdio: "inherit",
  env: {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: "1",
    // Turnscope drains runs on SIGTERM itself (lib/shutdown.ts) instead of Next.js closing at once.
    NEXT_MANUAL_SIG_HANDLE: "true",
  },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
