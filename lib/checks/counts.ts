/** Bounds a count must stay within (shared by step count, message count and turns to first answer). */
import { z } from "zod";

export const bounds = z
  .strictObject({
    min: z.number().int().min(0).optional(),
    max: z.number().int().min(0).optional(),
  })
  .refine((b) => b.min !== undefined || b.max !== undefined, { message: "give min, max or both" })
  .refine((b) => b.min === undefined || b.max === undefined || b.min <= b.max, { path: ["min"], message: "must not exceed max" });

/** `null` when the count is within bounds, else what is wrong. */
export function outOfBounds(count: number, b: { min?: number; max?: number }): string | null {
  if (b.min !== undefined && count < b.min) return `fewer than the minimum of ${b.min}`;
  if (b.max !== undefined && count > b.max) return `more than the maximum of ${b.max}`;
  return null;
}

export function boundsText(b: { min?: number; max?: number }): string {
  if (b.min !== undefined && b.max !== undefined) return `between ${b.min} and ${b.max}`;
  return b.min !== undefined ? `at least ${b.min}` : `at most ${b.max}`;
}
