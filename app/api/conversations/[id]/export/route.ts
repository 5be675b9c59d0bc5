import { route } from "@/lib/api/route";
import { exportConversationAtif } from "@/lib/results/interchange-export";
import { idParams } from "@/lib/schemas/common";
import { conversationExportQuery } from "@/lib/schemas/executions";

export const GET = route({
  params: idParams,
  query: conversationExportQuery,
  handler: async ({ params }) => {
    const file = await exportConversationAtif(params.id);
    return new Response(file.body, {
      headers: {
        "content-type": file.contentType,
        "content-disposition": `attachment; filename="${file.filename}"`,
        "cache-control": "no-store",
      },
    });
  },
});
