// `npm start`: install if needed, build if needed, then serve. The database is created and migrated
// by the server itself when it starts (instrumentation.ts → db/sqlite-database.ts).
import { spawn } from "node:child_process";
import path from "node:path";
import { ensureBuild, ensureDependencies, nativeModulesMissing, nextBin, root } from "./project.mjs";

const started = Date.now();
ensureDependencies({ native: false });
// The native module (better-sqlite3, compiled from C at a fresh install) is not loaded by the build, so
// on a fresh clone it compiles beside `next build` rather than before it: the compiler is one thread, as
// is the build's type check, on a machine with two cores or more.
const native = nativeModulesMissing()
  ? new Promise((resolve) => spawn(process.execPath, [path.join(root, "scripts", "project.mjs"), "native"], { cwd: root, stdio: "inherit" }).on("exit", (code) => resolve(code ?? 1)))
  : Promise.resolve(0);
ensureBuild({ typeCheck: false });
const nativeStatus = await native;
if (nativeStatus !== 0) process.exit(nativeStatus);
if (Date.now() - started > 5_000) console.log(`▸ Ready to serve after ${Math.round((Date.now() - started) / 1000)} s of installing and building`);

const port = process.env.PORT ?? "3000";
// This machine only by default: a fresh server is open (no credential yet), and whoever reaches it could
// read, write and run everything. HOSTNAME_BIND=0.0.0.0 serves other machines (create an admin key first).
const hostname = process.env.HOSTNAME_BIND ?? "127.0.0.1";
console.log(`▸ Serving Turnscope on http://localhost:${port}`);
// Idle keep-alive connections are kept 65 s (Node's default is 5 s): longer than a load balancer's own idle
// timeout (60 s on the common ones), so the balancer, not the server, closes an idle connection, and a
// request it sends on one never meets a socket the server closed under it.
const child = spawn(process.execPath, [nextBin, "start", "-p", port, "-H", hostname, "--keepAliveTimeout", "65000"], {
  cwd: root,
  // The IPC channel is the server's lifeline: when this process goes away, however it goes (even
  // SIGKILL), the channel closes and the server drains and exits (lib/shutdown.ts).
  stdio: ["inherit", "inherit", "inherit", "ipc"],
  env: {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: "1",
    // Turnscope drains runs on SIGTERM itself (lib/shutdown.ts) instead of Next.js closing at once.
    NEXT_MANUAL_SIG_HANDLE: "true",
  },
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal === "SIGHUP" ? "SIGTERM" : signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
// If whatever started us (npm, a shell, a supervisor) dies without a signal to us, we are re-parented:
// stop the server rather than leave it running unowned.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) child.kill("SIGTERM");
}, 1000).unref();
