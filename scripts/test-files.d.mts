/** Types of scripts/test-files.mjs for vitest.config.mts and the tests that import it. */
export type TestGroup = "store" | "no-store" | "own-cluster";
export const groups: readonly TestGroup[];
export function classify(file: string): { group: TestGroup; why: string };
export function testFilesByGroup(): Record<TestGroup, string[]>;
