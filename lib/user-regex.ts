/**
 * Regular expressions written by users (check patterns, JSON Schema `pattern`/`patternProperties`) run on
 * RE2 (re2js): matching time is linear in the text, so no pattern can stall the event loop the way a
 * backtracking `(a+)+$` does on JavaScript's RegExp. RE2 has no backreferences and no lookaround; a
 * pattern that needs them is refused with a message saying so. JavaScript spellings RE2 lacks
 * (`\uXXXX`, `(?<name>…)`) are translated first, so patterns written for JavaScript mostly keep working.
 */
import type { RegExpEngine } from "ajv/dist/types";
import { RE2JS } from "re2js";

/** What the README and error messages call the accepted syntax. */
export const PATTERN_SYNTAX = "RE2 syntax (as in Go and re2: no backreferences such as \\1, no lookahead or lookbehind)";

/** Longest pattern accepted anywhere. */
export const MAX_PATTERN_LENGTH = 2000;

/**
 * Largest compiled program accepted. Matching costs up to (program size × text length) steps, so a
 * pattern like `[a-z]{1000}[a-z]{1000}` is linear but slow on a long text; this keeps the constant small.
 */
export const MAX_PATTERN_INSTRUCTIONS = 1000;

/** A user pattern that cannot be accepted; the message says why and which syntax is. */
export class PatternError extends Error {}

const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };

const cache = new Map<string, RE2JS>();
const MAX_CACHED = 500;

/** Compile a user pattern on RE2 with JavaScript-style flags (`i`, `m`, `s`, `u`); throws PatternError. Cached. */
export function compileUserPattern(pattern: string, flags = ""): RE2JS {
  const key = `${flags}/${pattern}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const compiled = compileUncached(pattern, flags);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

function compileUncached(pattern: string, flags: string): RE2JS {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new PatternError(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  let bits = 0;
  for (const flag of flags) {
    if (!(flag in FLAG_BITS)) throw new PatternError(`has an unsupported flag '${flag}' (use i, m, s or u)`);
    bits |= FLAG_BITS[flag];
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern), bits);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
    throw new PatternError(`is not accepted (${reason}); patterns use ${PATTERN_SYNTAX}`);
  }
  if (programSize(compiled) > MAX_PATTERN_INSTRUCTIONS) {
    throw new PatternError(`is too complex (large repetition counts such as {1000}); simplify it`);
  }
  return compiled;
}

/** Null when the pattern compiles on RE2 within the limits, else why not. */
export function patternProblem(pattern: string, flags = ""): string | null {
  try {
    compileUserPattern(pattern, flags);
    return null;
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
}

function programSize(compiled: RE2JS): number {
  // re2js keeps the compiled program on an internal field; without it the length cap alone applies.
  const prog = (compiled as unknown as { re2Input?: { prog?: { numInst?: () => number } } }).re2Input?.prog;
  return typeof prog?.numInst === "function" ? prog.numInst() : 0;
}

/**
 * ajv's `code.regExp` engine: JSON Schema `pattern` and `patternProperties` compile on RE2. ajv keys its
 * compiled patterns by `toString()`, so each one says its own source.
 */
export const re2RegExpEngine: RegExpEngine = Object.assign(
  (pattern: string, u: string) => {
    let compiled: RE2JS;
    try {
      compiled = compileUserPattern(pattern, u);
    } catch (error) {
      throw new PatternError(`pattern ${JSON.stringify(pattern.slice(0, 100))} ${(error as Error).message}`);
    }
    return { test: (s: string) => compiled.test(s), toString: () => `/${pattern}/${u}` };
  },
  { code: "re2RegExpEngine" },
);
