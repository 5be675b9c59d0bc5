/**
 * Import a file through the API (POST /api/datasets/import, a new dataset named after it) and read back every
 * conversation it made as GET /api/conversations/{id} shows it (tests of imports and exports).
 */
import { call } from "@/lib/testing/http/call";
import { upload } from "@/lib/testing/http/multipart";
import * as createAndImport from "@/app/api/datasets/import/route";
import * as conversationsRoute from "@/app/api/datasets/[id]/conversations/route";
import * as conversationRoute from "@/app/api/conversations/[id]/route";

export async function importFile<C = unknown>(text: string, filename: string) {
  const res = await upload(createAndImport.POST, "/api/datasets/import", { file: text, filename, fields: { name: filename } });
  if (res.status !== 201) throw new Error(`${filename}: ${res.status} ${res.text}`);
  const id = res.json.dataset_id as number;
  const list = await call(conversationsRoute.GET, "GET", `/api/datasets/${id}/conversations?limit=500`, { params: { id } });
  const conversations: C[] = [];
  for (const c of list.json as Array<{ id: number }>) conversations.push((await call(conversationRoute.GET, "GET", `/api/conversations/${c.id}`, { params: { id: c.id } })).json as C);
  return { outcome: res.json, datasetId: id, conversations };
}
