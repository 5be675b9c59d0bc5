/** Process CPU time from Linux /proc, for benchmarks that measure servers they start. */
import fs from "node:fs";

/** CPU seconds a process has used so far (Linux /proc; 0 elsewhere). */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return 0;
  }
}

/** CPU seconds of a process and its descendants (the worker runs under tsx, which starts node as its child). */
export function treeCpuSeconds(root: number | undefined): number {
  const parents = new Map<number, number>();
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      parents.set(Number(pid), Number(fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  for (const pid of parents.keys()) {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parents.get(p)) {
      if (p === root) {
        total += cpuSeconds(pid);
        break;
      }
    }
  }
  return total;
}

/** Resident memory of a process and its descendants, in MB (Linux /proc). */
export function treeRssMb(pid: number): number {
  let kb = 0;
  const visit = (p: number) => {
    try {
      const status = fs.readFileSync(`/proc/${p}/status`, "utf8");
      kb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      for (const task of fs.readdirSync(`/proc/${p}/task`)) {
        const children = fs.readFileSync(`/proc/${p}/task/${task}/children`, "utf8").trim();
        for (const child of children ? children.split(/\s+/) : []) visit(Number(child));
      }
    } catch {
      // the process ended meanwhile
    }
  };
  visit(pid);
  return Math.round((kb / 1024) * 10) / 10;
}
