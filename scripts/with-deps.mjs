// `npm run judge:double` on a fresh clone: install first (as npm start does), then run the command —
// the README starts the double before anything else, and tsx comes with the dependencies.
import { spawn } from "node:child_process";
import path from "node:path";
import { ensureDependencies, root } from "./project.mjs";

ensureDependencies({ native: false });
const [command, ...args] = process.argv.slice(2);
const child = spawn(path.join(root, "node_modules", ".bin", command), args, { cwd: root, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
