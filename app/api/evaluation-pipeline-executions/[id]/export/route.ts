import { route } from "@/lib/api/route";
import { exportExecution } from "@/lib/results/export";
import { idParams } from "@/lib/schemas/common";
import { exportQuery } from "@/lib/schemas/executions";

export const GET = route({
  params: idParams,
  query: exportQuery,
  handler: async ({ params, query }) => {
    const file = await exportExecution(params.id, query.format, { bom: query.bom });
    return new Response(file.body, {
      headers: {
        "content-type": file.contentType,
        "content-disposition": `attachment; filename="${file.filename}"`,
        "cache-control": "no-store",
      },
    });
  },
});
