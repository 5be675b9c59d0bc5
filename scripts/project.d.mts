/** Types of scripts/project.mjs for the TypeScript scripts that import it. */
export const root: string;
export const nextBin: string;
/** The files and folders whose contents decide whether `next build` (also npm test's type check) runs again. */
export const buildInputs: readonly string[];
export function run(cmd: string, args: string[], opts?: { env?: Record<string, string>; progress?: string }): void;
export function ensureDependencies(options?: { native?: boolean }): void;
export function nativeModulesMissing(): boolean;
export function ensureNativeModules(): void;
/** What npm start's product build reads. */
export const productInputs: readonly string[];
export function sourceFingerprint(inputs?: readonly string[], base?: string): string;
export function ensureBuild(options?: { checkTests?: boolean; typeCheck?: boolean }): void;
