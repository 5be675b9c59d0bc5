/**
 * The structural reader alone (every named adapter left out) on the real public files of ../shared/realdata
 * and the fixtures (../shared/fixtures, e2e/fixtures/formats): per file, whether its inferred mapping imports
 * the file with ≥ 99% of its text and every tool call, and the share of files that do (goal of issue 49: ≥ 90% of the conversation files, the invalid-* fixtures apart). Prints a
 * table per file, then `BENCH_RESULT`. Run with `npm run bench -- bench/structure.bench.ts`.
 */
import fs from "node:fs";
import path from "node:path";
import { measureStructural } from "@/lib/import/structure/measure";

const dirs = [path.resolve(process.cwd(), "../shared/realdata"), path.resolve(process.cwd(), "../shared/fixtures"), path.resolve(process.cwd(), "e2e/fixtures/formats")];
const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
const rows: Array<Record<string, unknown>> = [];
for (const dir of dirs) {
  if (!fs.existsSync(dir)) {
    console.log(`(skipped: ${dir} is absent)`);
    continue;
  }
  for (const name of fs.readdirSync(dir).sort()) {
    if (!/\.(json|jsonl|traj)$/.test(name)) continue;
    const file = path.join(dir, name);
    const m = measureStructural(new Uint8Array(fs.readFileSync(file)));
    const row = {
      file: `${path.basename(dir)}/${name}`,
      passes: m.passes,
      imported: m.imported,
      text_kept: m.imported ? pct(m.textKept) : "-",
      tool_calls: m.imported ? `${m.callsStored}/${m.callsInFile}` : "-",
      reason: m.reason ?? "",
    };
    rows.push(row);
    console.log(`${m.passes ? "PASS" : "FAIL"}  ${row.file.padEnd(64)} text ${String(row.text_kept).padStart(6)}  calls ${String(row.tool_calls).padStart(9)}  ${row.reason.slice(0, 90)}`);
  }
}
const passed = rows.filter((r) => r.passes).length;
// The fixtures named invalid-* are written to be refused (a syntax error, a missing role): shown apart, the share
// also given without them.
const valid = rows.filter((r) => !/\/invalid-/.test(String(r.file)));
const validPassed = valid.filter((r) => r.passes).length;
console.log(`structural reader alone: ${passed}/${rows.length} files (${pct(rows.length ? passed / rows.length : 0)}) with ≥ 99% of their text and every tool call`);
console.log(`without the invalid-* fixtures: ${validPassed}/${valid.length} (${pct(valid.length ? validPassed / valid.length : 0)})`);
console.log(
  `BENCH_RESULT ${JSON.stringify({ structural_reader_share: { files: rows.length, passing: passed, share: rows.length ? passed / rows.length : 0, valid_files: valid.length, valid_passing: validPassed, valid_share: valid.length ? validPassed / valid.length : 0, per_file: rows } })}`,
);
