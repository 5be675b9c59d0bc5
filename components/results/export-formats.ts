/** The downloads an export menu offers, as the export routes' query strings (`format`, and `bom` for Excel's CSV). */
export const exportFormats = [
  { query: "format=csv", label: "CSV" },
  { query: "format=csv&bom=true", label: "CSV for Excel (UTF-8 with BOM)" },
  { query: "format=json", label: "JSON" },
  { query: "format=xlsx", label: "Excel (.xlsx)" },
] as const;
