import { route } from "@/lib/api/route";
import { exportGrid } from "@/lib/results/grid-export";
import { exportDatasetInterchange, refuseFilter } from "@/lib/results/interchange-export";
import type { ExportFile } from "@/lib/results/export";
import { idParams } from "@/lib/schemas/common";
import { datasetExportQuery } from "@/lib/schemas/executions";

export const GET = route({
  params: idParams,
  query: datasetExportQuery,
  handler: async ({ params, query }) => {
    let file: ExportFile;
    if (query.format === "atif" || query.format === "openai_jsonl") file = await exportDatasetInterchange(params.id, query.format, query.filter);
    else {
      if (query.filter !== undefined) refuseFilter(query.format);
      file = await exportGrid(params.id, query.format, { bom: query.bom });
    }
    return new Response(file.body, {
      headers: {
        "content-type": file.contentType,
        "content-disposition": `attachment; filename="${file.filename}"`,
        "cache-control": "no-store",
      },
    });
  },
});
