/**
 * The import mapping language (lib/schemas/import-mapping.ts for the document, docs/importing.md for the
 * guide): version 1 (the flat `ImportMapping`) read by formats/mapping.ts, version 2 by ./interpret.ts.
 */
import type { AnyImportMapping, ImportMapping } from "@/lib/schemas/imports";
import type { ImportMappingV2 } from "@/lib/schemas/import-mapping";
import type { ParseResult } from "../parse";
import type { Normalised } from "../formats/normalised";
import { applyMapping } from "../formats/mapping";
import { applyMappingV2 } from "./interpret";

type Parsed = Extract<ParseResult, { ok: true }>;

export const isV2 = (m: AnyImportMapping | undefined): m is ImportMappingV2 => !!m && (m as { version?: unknown }).version === 2;
export const asV1 = (m: AnyImportMapping | undefined): ImportMapping | undefined => (m && !isV2(m) ? m : undefined);

/** Read a parsed upload with a mapping of either version. */
export function applyAnyMapping(parsed: Parsed, mapping: AnyImportMapping): Normalised {
  return isV2(mapping) ? applyMappingV2(parsed, mapping) : applyMapping(parsed, mapping);
}

export { applyMappingV2 } from "./interpret";
export { unpackContainer } from "./container";
