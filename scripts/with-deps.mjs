// `npm run judge:double` on a fresh clone: install first (as npm start does), then run the command —
// the README starts the double before anything else, and tsx comes with the dependencies.
//
// `with-deps.mjs tsx <file.ts> [args…]` runs the TypeScript file IN THIS PROCESS (tsx registered as a
// loader once installed), not as a tsx child that starts a node child of its own: killing the PID a shell
// or a script holds for the double (`kill $!`, even `kill -9`) ends the process that holds the port.
// Killed without a signal reaching us — the npm above us killed with -9 — we are re-parented and exit too.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ensureDependencies, root } from "./project.mjs";

ensureDependencies({ native: false });
const [command, ...args] = process.argv.slice(2);

/** A process's parent, from /proc (Linux); undefined where it cannot be read. */
function parentOf(pid) {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[1]);
  } catch {
    return undefined;
  }
}
// npm runs us under `sh -c`: its death re-parents the shell, not us, so the shell's parent is watched too.
const parent = process.ppid;
const grandparent = parentOf(parent);
setInterval(() => {
  if (process.ppid !== parent || (grandparent !== undefined && parentOf(parent) !== grandparent)) process.kill(process.pid, "SIGTERM");
}, 1000).unref();

if (command === "tsx" && args[0] && !args[0].startsWith("-")) {
  const { tsImport } = await import(pathToFileURL(path.join(root, "node_modules", "tsx", "dist", "esm", "api", "index.mjs")).href);
  const file = path.resolve(root, args[0]);
  process.argv = [process.argv[0], file, ...args.slice(1)];
  await tsImport(pathToFileURL(file).href, { parentURL: import.meta.url, tsconfig: path.join(root, "tsconfig.json") });
} else {
  const child = spawn(path.join(root, "node_modules", ".bin", command), args, { cwd: root, stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
}
