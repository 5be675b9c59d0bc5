/** Datasets and their conversations, messages and steps: the only place these tables are queried. */
import "server-only";
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import type { ConversationRow, DatasetRow, MessageRow, StepRow } from "../schema";
import { changes, database, first, prepared, rawRows } from "../store";
import { IN_JSON_INTEGERS, inJsonIntegers, jsonColumn } from "./json-fields";
import { conversationsTable, datasetCountsTable, datasetsTable } from "../tables";

export type DatasetWithCounts = DatasetRow & {
  conversationCount: number;
  messageCount: number;
  stepCount: number;
};

type Counts = Pick<DatasetWithCounts, "conversationCount" | "messageCount" | "stepCount">;

/** Counts per dataset as the triggers keep them (dataset_counts, migration 0016): one indexed read, whatever the size. */
async function countsOf(ids: number[]): Promise<Map<number, Counts>> {
  const t = datasetCountsTable;
  const rows = await prepared(
    "datasets.counts",
    (db) =>
      db
        .select({ id: t.datasetId, conversationCount: t.conversations, messageCount: t.messages, stepCount: t.steps })
        .from(t)
        .where(inJsonIntegers(t.datasetId, sql.placeholder("ids"))),
    { ids: JSON.stringify(ids) },
  );
  return new Map(rows.map((r) => [r.id, { conversationCount: Number(r.conversationCount), messageCount: Number(r.messageCount), stepCount: Number(r.stepCount) }]));
}

async function withCounts(rows: DatasetRow[]): Promise<DatasetWithCounts[]> {
  if (!rows.length) return [];
  const counts = await countsOf(rows.map((r) => r.id));
  return rows.map((r) => ({ ...r, ...(counts.get(r.id) ?? { conversationCount: 0, messageCount: 0, stepCount: 0 }) }));
}

const nowIso = () => new Date().toISOString();

export async function createDataset(input: { name: string; description?: string | null; userId: string }): Promise<DatasetWithCounts> {
  const db = await database();
  const [row] = await db
    .insert(datasetsTable)
    .values({ name: input.name, description: input.description ?? null, userId: input.userId })
    .returning();
  return { ...row, conversationCount: 0, messageCount: 0, stepCount: 0 };
}

export async function getDataset({ id }: { id: number }): Promise<DatasetWithCounts | undefined> {
  const db = await database();
  return first(await withCounts(await db.select(datasetColumns()).from(datasetsTable).where(eq(datasetsTable.id, id))));
}

export async function datasetExists({ id }: { id: number }): Promise<boolean> {
  // Asked by every grid page and most dataset routes: prepared once.
  const rows = await prepared("datasets.exists", (db) => db.select({ id: datasetsTable.id }).from(datasetsTable).where(eq(datasetsTable.id, sql.placeholder("id"))), { id });
  return rows.length > 0;
}

/** `lower(column)` contains `text` in any case (ASCII case on SQLite); `%`, `_` and backslash in the text are taken literally. */
function nameContains(column: typeof datasetsTable.name | typeof conversationsTable.name, text: string) {
  const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql`lower(${column}) like ${pattern} escape '\\'`;
}

export async function listDatasets(opts: { limit: number; offset: number; userId?: string; name?: string }): Promise<{
  items: DatasetWithCounts[];
  total: number;
}> {
  const db = await database();
  const where = and(opts.userId ? eq(datasetsTable.userId, opts.userId) : undefined, opts.name ? nameContains(datasetsTable.name, opts.name) : undefined);
  const items = await withCounts(
    await db.select(datasetColumns()).from(datasetsTable).where(where).orderBy(desc(datasetsTable.createdAt), desc(datasetsTable.id)).limit(opts.limit).offset(opts.offset),
  );
  const total = first(await db.select({ n: count() }).from(datasetsTable).where(where))?.n ?? 0;
  return { items, total };
}

export async function updateDataset(
  id: number,
  patch: { name?: string; description?: string | null },
): Promise<DatasetWithCounts | undefined> {
  const values: Partial<typeof datasetsTable.$inferInsert> = { updatedAt: nowIso() };
  if (patch.name !== undefined) values.name = patch.name;
  if (patch.description !== undefined) values.description = patch.description;
  const db = await database();
  const updated = await db.update(datasetsTable).set(values).where(eq(datasetsTable.id, id)).returning();
  return updated.length ? await getDataset({ id }) : undefined;
}

/** Delete a dataset; foreign keys cascade to conversations, messages, steps, metrics, executions, results. */
export async function deleteDataset({ id }: { id: number }): Promise<boolean> {
  const db = await database();
  return changes(await db.delete(datasetsTable).where(eq(datasetsTable.id, id))) > 0;
}

export type ConversationWithCounts = ConversationRow & { messageCount: number; stepCount: number };
/** A listed conversation also carries the start of its first user message: what a nameless one is called by. */
export type ListedConversation = ConversationWithCounts & { firstUser: string | null };

const conversationCounts = {
  messageCount: sql<number>`(select count(*) from messages m where m.conversation_id = "conversations"."id")`,
  stepCount: sql<number>`(select count(*) from steps s where s.conversation_id = "conversations"."id")`,
};

/**
 * A page of a dataset's conversations in position order. `after`: the position the page starts after
 * (keyset paging: reads from there, where an offset skips rows one by one). Without `ids` or `name` the
 * total is the dataset's kept count.
 */
export async function listConversations(opts: { datasetId: number; limit: number; offset: number; ids?: number[]; name?: string; after?: number }): Promise<{
  items: ListedConversation[];
  total: number;
}> {
  const db = await database();
  const c = conversationsTable;
  const where = and(
    eq(c.datasetId, opts.datasetId),
    opts.ids ? inJsonIntegers(c.id, sql`${JSON.stringify(opts.ids)}`) : undefined,
    opts.name ? nameContains(c.name, opts.name) : undefined,
  );
  // Keyset from `after`; an offset finds its first row's position on the (dataset, position) index first, so the
  // per-row counts and labels below are computed for the page only (PostgreSQL computed them for every row an
  // OFFSET skipped: 6.4 s at offset 999,900).
  const page =
    opts.after !== undefined
      ? and(where, sql`${c.position} > ${opts.after}`)
      : opts.offset > 0
        ? and(where, sql`${c.position} >= (select ${c.position} from ${c} where ${where} order by ${c.position} limit 1 offset ${opts.offset})`)
        : where;
  const items = await db
    .select({
      ...conversationColumns(),
      ...conversationCounts,
      firstUser: sql<string | null>`(select substr(m.content, 1, 200) from messages m where m.conversation_id = "conversations"."id" and m.role = 'user' order by m.position limit 1)`,
    })
    .from(c)
    .where(page)
    .orderBy(asc(c.position))
    .limit(opts.limit);
  const total =
    opts.ids || opts.name
      ? (first(await db.select({ n: count() }).from(c).where(where))?.n ?? 0)
      : ((await countsOf([opts.datasetId])).get(opts.datasetId)?.conversationCount ?? 0);
  return { items, total };
}

const json = jsonColumn;

type RawConversation = {
  id: number; dataset_id: number; position: number; name: string | null; description: string | null; meta: string | null;
  agents: string | null; goal: string | null; goal_generated_by: string | null; created_at: string; message_count: number; step_count: number;
};
type RawMessage = { id: number; conversation_id: number; dataset_id: number; position: number; role: MessageRow["role"]; content: string | null; meta: string | null; created_at: string };
type RawStep = {
  id: number; message_id: number; conversation_id: number; dataset_id: number; position: number; thinking: string | null; tool_call: string | null;
  tool_result: string | null; output_content: string | null; output_structured: string | null; model_name: string | null; agent_name: string | null; created_at: string;
};

/**
 * One conversation with its messages and their steps, in position order (three queries in all). The
 * runner loads one per evaluated conversation, so the statements are prepared once.
 */
export async function getConversationTree({ id }: { id: number }) {
  return (await getConversationTrees([id])).get(id);
}

/** An id list as one parameter (JSON text), so the statement's text is the same for any number of ids. */
const idsIn = IN_JSON_INTEGERS;

/**
 * Several conversations' trees in three queries, by id (ids not found are absent). A queued batch of
 * cells loads its conversations at once instead of three round trips per cell.
 */
export async function getConversationTrees(ids: number[]): Promise<Map<number, StoredConversationTree>> {
  const trees = new Map<number, StoredConversationTree>();
  if (ids.length === 0) return trees;
  const param = JSON.stringify([...new Set(ids)]);
  const conversations = await rawRows<RawConversation>(
    `select c.*, (select count(*) from messages m where m.conversation_id = c.id) as message_count,
       (select count(*) from steps s where s.conversation_id = c.id) as step_count
     from conversations c where c.id ${idsIn}`,
    [param],
  );
  if (conversations.length === 0) return trees;
  const messages = await rawRows<RawMessage>(`select * from messages where conversation_id ${idsIn} order by conversation_id, position`, [param]);
  const steps = await rawRows<RawStep>(`select * from steps where conversation_id ${idsIn} order by conversation_id, message_id, position`, [param]);
  const stepsByMessage = new Map<number, StepRow[]>();
  for (const s of steps) {
    const step: StepRow = {
      id: s.id, messageId: s.message_id, conversationId: s.conversation_id, datasetId: s.dataset_id, position: s.position, thinking: s.thinking,
      toolCall: json(s.tool_call), toolResult: json(s.tool_result), outputContent: s.output_content, outputStructured: json(s.output_structured),
      modelName: s.model_name, agentName: s.agent_name, createdAt: s.created_at,
    };
    const list = stepsByMessage.get(step.messageId);
    if (list) list.push(step);
    else stepsByMessage.set(step.messageId, [step]);
  }
  const messagesByConversation = new Map<number, StoredConversationTree["messages"]>();
  for (const m of messages) {
    const message = {
      id: m.id, conversationId: m.conversation_id, datasetId: m.dataset_id, position: m.position, role: m.role, content: m.content, meta: json(m.meta),
      createdAt: m.created_at, steps: stepsByMessage.get(m.id) ?? [],
    };
    const list = messagesByConversation.get(m.conversation_id);
    if (list) list.push(message);
    else messagesByConversation.set(m.conversation_id, [message]);
  }
  for (const c of conversations) {
    trees.set(c.id, {
      conversation: {
        id: c.id, datasetId: c.dataset_id, position: c.position, name: c.name, description: c.description, meta: json(c.meta),
        agents: json(c.agents), goal: c.goal, goalGeneratedBy: c.goal_generated_by, createdAt: c.created_at,
        messageCount: Number(c.message_count), stepCount: Number(c.step_count),
      },
      messages: messagesByConversation.get(c.id) ?? [],
    });
  }
  return trees;
}

/** A conversation with its messages and each message's steps, in position order. */
export type StoredConversationTree = {
  conversation: ConversationWithCounts;
  messages: Array<MessageRow & { steps: StepRow[] }>;
};

function datasetColumns() {
  const { id, name, description, userId, createdAt, updatedAt } = datasetsTable;
  return { id, name, description, userId, createdAt, updatedAt };
}

function conversationColumns() {
  const { id, datasetId, position, name, description, meta, agents, goal, goalGeneratedBy, createdAt } =
    conversationsTable;
  return { id, datasetId, position, name, description, meta, agents, goal, goalGeneratedBy, createdAt };
}
