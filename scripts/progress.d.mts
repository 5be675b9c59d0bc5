/** Types of scripts/progress.mjs for the TypeScript files that import it. */
export function formatElapsed(ms: number): string;
export function phaseOf(what: string, lastLine: string): string;
