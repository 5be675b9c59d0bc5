import { route } from "@/lib/api/route";
import { sseResponse } from "@/lib/api/sse";
import { getGeneration } from "@/lib/generation";
import { generationFeed } from "@/lib/generation/feed";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

/** Follow a generation: `processing` with its counts, one `conversation` event each (from the first), then `done`. */
export const GET = route({
  params: idParams,
  handler: async ({ params, guard }) => {
    await getGeneration(params.id);
    return sseResponse(
      (writer) => generationFeed(params.id, (e) => writer.send(e), () => writer.close()),
      undefined,
      guard,
    );
  },
});
