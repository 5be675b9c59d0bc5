// A throwaway PostgreSQL test server for the tests and CI: initdb into .pg/<random> under the project, a
// free port on 127.0.0.1 only, the unix socket inside that directory, fsync off; removed by stop().
// Never a system service: nothing is registered with the machine, and the server dies with the
// process that started it (stop on exit and on SIGINT/SIGTERM/SIGHUP, plus a watchdog process that
// stops it if its owner is killed outright).
//
//   import { startPgTestServer } from "./pg-test-server.mjs";
//   const { url, stop } = await startPgTestServer();   // url: postgres://postgres@127.0.0.1:<port>/turnscope
//
//   node scripts/pg-test-server.mjs start            start one, print DATABASE_URL=…, stop it on Ctrl-C/SIGTERM
//   node scripts/pg-test-server.mjs run -- <cmd…>    run a command with DATABASE_URL set, then stop the test server
//   node scripts/pg-test-server.mjs stop [dir]       stop and remove every test server under .pg (or just that one)
//
// Binaries: $PG_BINDIR, then `pg_config --bindir`, then Debian's /usr/lib/postgresql/<major>/bin (newest
// first), then PATH. initdb and postgres refuse to run as root: as root the server runs as the user
// $PG_CLUSTER_USER (default `postgres`, which Debian's package creates).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { root } from "./project.mjs";

export const testServersDir = path.join(root, ".pg");
const selfPath = new URL(import.meta.url).pathname;
/** A unix socket path longer than this does not fit sockaddr_un (108 bytes with the terminator). */
const maxSocketPath = 100;

/** An error that means "PostgreSQL is not installed here", as opposed to a test server that failed. */
export class PgBinariesMissingError extends Error {}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The directory holding initdb, pg_ctl and postgres, or null when PostgreSQL is not installed. */
export function findPgBinDir() {
  const candidates = [];
  if (process.env.PG_BINDIR) candidates.push(process.env.PG_BINDIR);
  const cfg = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  if (cfg.status === 0 && cfg.stdout.trim()) candidates.push(cfg.stdout.trim());
  try {
    const majors = fs.readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
    for (const major of majors) candidates.push(path.join("/usr/lib/postgresql", major, "bin"));
  } catch {
    // Not Debian's layout.
  }
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) if (dir) candidates.push(dir);
  for (const dir of candidates) {
    if (["initdb", "pg_ctl", "postgres"].every((bin) => isExecutable(path.join(dir, bin)))) return dir;
  }
  return null;
}

/** The unprivileged account the server runs as when we are root; null when we are not root. */
function serverAccount() {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return null;
  const user = process.env.PG_CLUSTER_USER || "postgres";
  const uid = spawnSync("id", ["-u", user], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", user], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error(
      `PostgreSQL refuses to run as root and there is no user "${user}" to run it as. ` +
        `Install Debian's postgresql package (it creates "postgres"), set PG_CLUSTER_USER, or run as another user.`,
    );
  }
  return { user, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Run a PostgreSQL program, as the server account when we are root; throw with its output on failure. */
function pgRun(meta, bin, args, { allowFailure = false } = {}) {
  const res = spawnSync(path.join(meta.binDir, bin), args, {
    encoding: "utf8",
    // Output goes to pipes, never inherited: the postmaster pg_ctl forks must not hold our stdio open.
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 120_000,
    env: { ...process.env, LC_ALL: "C", PGTZ: "UTC" },
    ...(meta.account ? { uid: meta.account.uid, gid: meta.account.gid } : {}),
  });
  if (res.status !== 0 && !allowFailure) {
    const output = `${res.stdout ?? ""}${res.stderr ?? ""}`.trim();
    throw new Error(`${bin} ${args.join(" ")} failed (${res.error?.message ?? `exit ${res.status ?? res.signal}`})\n${output}`);
  }
  return res;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

function readMeta(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "server.json"), "utf8"));
  } catch {
    return null;
  }
}

function chownTree(dir, account) {
  fs.chownSync(dir, account.uid, account.gid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, account);
    else fs.chownSync(p, account.uid, account.gid);
  }
}

/** Whether the server account can write into `dir` (every directory above it must let it pass). */
function reachableBy(account, dir) {
  const res = spawnSync("/bin/sh", ["-c", 'test -w "$1" && test -x "$1"', "sh", dir], { uid: account.uid, gid: account.gid });
  return res.status === 0;
}

/**
 * Stop the server of a test server directory (if it runs) and remove the directory. Synchronous, so it
 * also works in an `exit` handler. Safe to call twice, and on a half-made test server.
 */
export function stopTestServerDir(dir) {
  const meta = readMeta(dir);
  if (meta?.watchdogPid && meta.watchdogPid !== process.pid && isAlive(meta.watchdogPid)) {
    try {
      process.kill(meta.watchdogPid, "SIGTERM");
    } catch {
      // Already gone.
    }
  }
  if (meta && fs.existsSync(path.join(meta.dataDir, "postmaster.pid"))) {
    // Immediate: the data is about to be deleted, so there is nothing to flush.
    const res = pgRun(meta, "pg_ctl", ["-D", meta.dataDir, "-m", "immediate", "-w", "-t", "30", "stop"], { allowFailure: true });
    if (res.status !== 0) {
      // pg_ctl could not stop it (or it was already dead): make sure no postmaster survives.
      const pid = Number(fs.readFileSync(path.join(meta.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      if (pid > 0 && isAlive(pid)) process.kill(pid, "SIGKILL");
    }
  }
  for (const extra of [meta?.workDir, meta?.socketDir]) {
    if (extra && extra !== dir) fs.rmSync(extra, { recursive: true, force: true });
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Remove test servers whose owner process is gone (killed before its watchdog could act, or a reboot). */
function sweepStaleServers() {
  let entries;
  try {
    entries = fs.readdirSync(testServersDir);
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = path.join(testServersDir, name);
    const meta = readMeta(dir);
    if (meta ? !isAlive(meta.ownerPid) : Date.now() - fs.statSync(dir).mtimeMs > 60_000) stopTestServerDir(dir);
  }
}

const active = new Set();
let handlersInstalled = false;

function stopAllActive() {
  for (const server of [...active]) server.stopSync();
}

function installExitHandlers() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", stopAllActive);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    const onSignal = () => {
      stopAllActive();
      process.removeListener(signal, onSignal);
      // Ours was the only handler: die of the signal as the process would have without us.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/**
 * A watchdog process, detached from us, reading a pipe from us: when we die however we die (even
 * SIGKILL), the pipe closes and it stops the test server. stop() ends it first with SIGTERM.
 */
function startWatchdog(dir) {
  const child = spawn(process.execPath, [selfPath, "watch", dir], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
  child.unref();
  child.stdin.on("error", () => {});
  child.stdin.unref?.();
  return child.pid;
}

/**
 * Start a throwaway test server with one database. Resolves to { url, host, port, database, dir, stop };
 * stop() stops the server and removes its directory (it also happens on exit and on SIGINT/SIGTERM).
 * Throws PgBinariesMissingError when PostgreSQL is not installed.
 */
export async function startPgTestServer({ database = "turnscope" } = {}) {
  const binDir = findPgBinDir();
  if (!binDir) {
    throw new PgBinariesMissingError(
      "PostgreSQL binaries (initdb, pg_ctl, postgres) not found: install Debian's postgresql package or set PG_BINDIR",
    );
  }
  const account = serverAccount();
  sweepStaleServers();
  fs.mkdirSync(testServersDir, { recursive: true });
  const dir = fs.mkdtempSync(path.join(testServersDir, "c-"));
  // Where the server's files go: the test server's directory, unless we are root and the server account
  // cannot reach it (a checkout under /root): then a directory under the system's temp dir, still
  // recorded in <dir>/server.json and removed with it.
  let workDir = dir;
  if (account) {
    fs.chownSync(dir, account.uid, account.gid);
    if (!reachableBy(account, dir)) workDir = fs.mkdtempSync(path.join(os.tmpdir(), "turnscope-pg-"));
  }
  // A deep path can make <socket dir>/.s.PGSQL.<port> too long for a unix socket: fall back to /tmp.
  const socketDir =
    path.join(workDir, ".s.PGSQL.65535").length <= maxSocketPath ? workDir : fs.mkdtempSync(path.join(os.tmpdir(), "pgsock-"));
  const meta = {
    ownerPid: process.pid,
    binDir,
    account,
    dir,
    workDir,
    dataDir: path.join(workDir, "data"),
    socketDir,
    logFile: path.join(workDir, "server.log"),
    watchdogPid: null,
  };
  const writeMeta = () => fs.writeFileSync(path.join(dir, "server.json"), JSON.stringify(meta, null, 2));
  writeMeta();

  let stopped = false;
  const server = {
    stopSync() {
      if (stopped) return;
      stopped = true;
      active.delete(server);
      stopTestServerDir(dir);
    },
  };
  active.add(server);
  installExitHandlers();

  try {
    if (account) for (const d of new Set([dir, workDir, socketDir])) chownTree(d, account);
    // Trust on 127.0.0.1 and the private socket only; C collation sorts text bytewise, as SQLite does.
    pgRun(meta, "initdb", ["-D", meta.dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"]);
    fs.appendFileSync(
      path.join(meta.dataDir, "postgresql.conf"),
      [
        "",
        "# Throwaway test server (scripts/pg-test-server.mjs): speed over durability, reachable only locally.",
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${socketDir.replaceAll("'", "''")}'`,
        "fsync = off",
        "synchronous_commit = off",
        "full_page_writes = off",
        "shared_buffers = 32MB",
        "max_connections = 200",
        "timezone = 'UTC'",
        "",
      ].join("\n"),
    );
    meta.watchdogPid = startWatchdog(dir);
    writeMeta();

    let port;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const res = pgRun(meta, "pg_ctl", ["-D", meta.dataDir, "-l", meta.logFile, "-o", `-p ${port}`, "-w", "-t", "60", "start"], {
        allowFailure: true,
      });
      if (res.status === 0) break;
      const log = fs.existsSync(meta.logFile) ? fs.readFileSync(meta.logFile, "utf8") : "";
      // Another process may take the port between our probe and the server's bind: try another.
      if (attempt < 5 && /could not bind|Address already in use/i.test(log)) continue;
      throw new Error(`pg_ctl start failed (exit ${res.status ?? res.signal})\n${res.stdout}${res.stderr}\n${log.slice(-4000)}`);
    }
    pgRun(meta, "createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", database]);
    const host = "127.0.0.1";
    const url = `postgres://postgres@${host}:${port}/${encodeURIComponent(database)}`;
    // The same database through the server's unix socket: no TCP stack on either side of each query.
    const socketUrl = `postgres://postgres@localhost:${port}/${encodeURIComponent(database)}?host=${encodeURIComponent(meta.socketDir)}`;
    return { url, socketUrl, host, port, database, dir, stop: async () => server.stopSync() };
  } catch (err) {
    server.stopSync();
    throw err;
  }
}

/** Stop and remove every test server under .pg, whoever started it. */
export function stopAllPgTestServers() {
  let entries = [];
  try {
    entries = fs.readdirSync(testServersDir);
  } catch {
    return 0;
  }
  for (const name of entries) stopTestServerDir(path.join(testServersDir, name));
  return entries.length;
}

async function cli(argv) {
  const [command, ...rest] = argv;
  if (command === "watch") {
    // The watchdog: wait for our owner's pipe to close, then stop its test server. SIGTERM means the owner
    // stopped it itself.
    const dir = rest[0];
    process.on("SIGTERM", () => process.exit(0));
    process.on("SIGINT", () => {});
    process.on("SIGHUP", () => {});
    const done = () => {
      stopTestServerDir(dir);
      process.exit(0);
    };
    process.stdin.on("end", done);
    process.stdin.on("close", done);
    process.stdin.on("error", done);
    process.stdin.resume();
    return;
  }
  if (command === "start") {
    const { url, dir } = await startPgTestServer();
    console.log(`DATABASE_URL=${url}`);
    console.error(`▸ PostgreSQL test server in ${path.relative(root, dir)}; Ctrl-C or SIGTERM stops and removes it`);
    setInterval(() => {}, 1 << 30);
    return;
  }
  if (command === "run") {
    const cmd = rest[0] === "--" ? rest.slice(1) : rest;
    if (cmd.length === 0) throw new Error("usage: node scripts/pg-test-server.mjs run -- <command> [args…]");
    const { url, stop } = await startPgTestServer();
    console.error(`▸ PostgreSQL test server at ${url}`);
    const child = spawn(cmd[0], cmd.slice(1), { stdio: "inherit", env: { ...process.env, DATABASE_URL: url } });
    // Pass a stop request on to the command; the test server goes once it has ended (or at once on exit).
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
    const code = await new Promise((resolve) => {
      child.on("error", (err) => {
        console.error(`✗ ${cmd[0]}: ${err.message}`);
        resolve(127);
      });
      child.on("exit", (status, signal) => resolve(status ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1)));
    });
    await stop();
    process.exit(code);
  }
  if (command === "stop") {
    if (rest[0]) stopTestServerDir(path.resolve(rest[0]));
    else console.error(`▸ Stopped and removed ${stopAllPgTestServers()} test server(s) under ${path.relative(root, testServersDir)}/`);
    return;
  }
  console.error("usage: node scripts/pg-test-server.mjs start | run -- <command…> | stop [dir]");
  process.exit(2);
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(selfPath)) {
  cli(process.argv.slice(2)).catch((err) => {
    console.error(`✗ ${err.message}`);
    process.exit(1);
  });
}
