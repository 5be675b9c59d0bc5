/** Types of scripts/check-imports.mjs for the TypeScript test that imports it. */
export function moduleOf(file: string): string;
/** Tests, benchmarks and their helpers (bench/, lib/testing/): not part of the product. */
export function isTestSupport(file: string): boolean;
export function checkImports(options?: { baseDir?: string; roots?: string[]; tsConfig?: string }): Promise<{
  files: string[][];
  folders: { modules: string[]; imports: string[] }[];
  /** Imports of test support by product code, each `file -> dependency`. */
  upward: string[];
}>;
export function findImportCycles(options?: { baseDir?: string; roots?: string[]; tsConfig?: string }): Promise<{
  /** File cycles as madge reports them (each a list of files). */
  files: string[][];
  /** Cycles between module folders: the modules and one import for each edge that closes the cycle. */
  folders: { modules: string[]; imports: string[] }[];
}>;
