import { route } from "@/lib/api/route";
import { sseResponse } from "@/lib/api/sse";
import { getGeneration, onGenerationEvent } from "@/lib/generation";
import { idParams } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

/** Follow a generation: `processing` with its state first, one `conversation` event each, then `done`. */
export const GET = route({
  params: idParams,
  handler: async ({ params, guard }) => {
    const first = await getGeneration(params.id);
    return sseResponse(
      (writer) => {
        writer.send({ event: "processing", data: { generation_id: first.id, completed: first.completed, failed: first.failed, total: first.total, status: first.status } });
        if (!["pending", "processing"].includes(first.status)) {
          writer.send({ event: "done", data: first });
          writer.close();
          return () => undefined;
        }
        const off = onGenerationEvent(params.id, (e) => {
          writer.send(e);
          if (e.event === "done") writer.close();
        });
        // Ended between the first read and the subscription: say so once.
        void getGeneration(params.id).then((now) => {
          if (!["pending", "processing"].includes(now.status)) {
            writer.send({ event: "done", data: now });
            writer.close();
          }
        });
        return off;
      },
      undefined,
      guard,
    );
  },
});
