/** `n` placeholders for hand-written SQL, `?, ?, ?`: an `in (…)` list or a row of values. */
export const placeholders = (n: number): string => new Array(n).fill("?").join(", ");
