/**
 * The import mapping language, version 2 (issue 49): a JSON document that says how any conversation file
 * becomes conversations — where its records are, which records are messages, how they form conversations
 * (per record, grouped, a tree, a run/span tree, a plain-text transcript, a preference or pairwise pair), and
 * which fields of a message are what. Declarative: it names paths, values and literal markers; nothing from
 * the file or the user runs. Version 1 (the flat `ImportMapping` of lib/schemas/imports.ts) is still accepted;
 * this one is told apart by `"version": 2`. Written so a model can write it: every field is described, the
 * errors name the field and say what it must be.
 */
import { z } from "zod";

const path = (what: string) =>
  z
    .string()
    .max(300, "must be at most 300 characters")
    .describe(
      `${what}. A path: keys joined by dots, \`[n]\` for the n-th element (\`[-1]\` the last), \`.\` or \`""\` for the value itself, \`a|b\` the first of two holding a value (not null): \`message.content.parts\`, \`id[-1]\`, \`observations|error\``,
    );

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const mappingConditionSchema = z
  .object({
    path: path("The field tested"),
    equals: scalar.optional().describe("Holds when the field equals this value"),
    in: z.array(scalar).max(100).optional().describe("Holds when the field equals one of these values"),
    not_in: z.array(scalar).max(100).optional().describe("Holds when the field is none of these values (absent counts as none)"),
    exists: z.boolean().optional().describe("true: holds when the field is present and not null; false: when it is absent or null"),
    empty: z.boolean().optional().describe("true: holds when the field is absent, null, an empty string or list, or a list of empty strings"),
    contains: z.string().max(200).optional().describe("Holds when the field is text containing this literal string"),
  })
  .strict()
  .describe("A test on one field; several conditions in a list must all hold");

const conditions = z.array(mappingConditionSchema).max(20);

/** How the records are found and cleaned before they form conversations. */
export const mappingRecordsSchema = z
  .object({
    container: z
      .enum(["none", "gzip", "zip"])
      .optional()
      .describe("The file is compressed: `gzip` (`.jsonl.gz`, `.json.gz`) or `zip` (every `.json` / `.jsonl` member read, in name order, as one file). Default `none`"),
    path: z
      .union([z.string().max(300), z.array(z.string().max(300)).min(1).max(10)])
      .optional()
      .describe(
        "Where the records are: `\"\"` (default) for the top-level list or the lines of JSON Lines (a top-level object is one record), a path such as `data.items`, or several paths read one after the other (`[\"post\", \"patch\"]`: create and update operations). An object keyed by id there gives its values, each with its key as `_key`",
      ),
    line_fields: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(20)
      .optional()
      .describe("Records that are arrays (JSON Lines whose lines are `[kind, payload, …]`): names for their positions, e.g. `[\"kind\", \"payload\"]`; further positions go to `rest`"),
    decode_json: z
      .array(z.string().max(300))
      .max(50)
      .optional()
      .describe("Fields holding JSON as text, decoded before anything else reads them (`text`, `payload.input`; `[]` for every element: `messages[].content`); text that is not JSON stays text"),
    where: conditions.optional().describe("Conditions a record must meet to be read; the others are skipped and counted by `kind` (tool definitions, hooks, progress)"),
    skip: conditions
      .optional()
      .describe("Records to skip when any one of these conditions holds (a single condition each); counted by `kind`"),
    kind: path("Field naming a record's kind, for the counts of skipped records and for `message.kinds`").optional(),
    collapse: z
      .object({
        by: path("Field identifying one thing written several times (a message part re-sent on every change, a run's create and update)"),
        keep: z.enum(["last", "merge"]).optional().describe("`last` (default): the last record with that id replaces the earlier ones, in the first one's place; `merge`: later records' fields are laid over the earlier ones (create + update operations)"),
      })
      .strict()
      .optional()
      .describe("Records written several times, collapsed to one per id"),
  })
  .strict();

const tree = z
  .object({
    from: z.literal("tree"),
    nodes: path("Field of a record holding its nodes: a list, or an object keyed by node id (ChatGPT's `mapping`); `\"\"` when the records themselves are the nodes").optional(),
    id: path("Node field holding its id; default the key of an object keyed by id, else `id`").optional(),
    parent: path("Node field naming its parent's id").optional(),
    children: path("Node field listing its children's ids (used when there is no parent field)").optional(),
    message: path("Node field holding its message; default the node itself. A node whose message is null is no turn").optional(),
    leaf: path("Record field naming the current leaf (`current_node`): the conversation is the path from the root to it. Absent: every leaf's path is a conversation, replies to the same node marked as siblings").optional(),
  })
  .strict()
  .describe("Messages linked by parent/child ids: a list of nodes or an object keyed by id");

const spans = z
  .object({
    from: z.literal("spans"),
    spans: path("Field of a record holding its spans / runs / observations (`observations`); `\"\"` when the records themselves are spans, grouped into traces by `trace`").optional(),
    trace: path("Span field naming its trace (`trace_id`), when the records are spans; default: the root found by `parent` or `dotted_order`").optional(),
    id: path("Span field holding its id (default `id`)").optional(),
    parent: path("Span field naming its parent span (`parent_run_id`, `parentObservationId`)").optional(),
    dotted_order: path("Span field holding the tree as a dotted order (`<time><id>.<time><id>`), when no parent field is written").optional(),
    order: path("Span field to sort spans by (a start time); default the order of the file").optional(),
    model_call: conditions.describe("Which spans are model calls (`[{\"path\": \"run_type\", \"equals\": \"llm\"}]`)"),
    input: path("Model call field holding its input chat messages (a list, or an object holding `messages`; LangChain's list of lists is read too)"),
    output: path("Model call field holding its output: a message, a list of them, text, or `generations` / `choices`"),
  })
  .strict()
  .describe("A run or span tree whose model calls carry chat messages: the last model call's input and output are the conversation (earlier calls' inputs are its prefixes); the other spans are kept in the conversation's meta (`spans`)");

const transcript = z
  .object({
    from: z.literal("transcript"),
    field: path("Record field holding the plain-text transcript"),
    speakers: z
      .record(z.string().min(1).max(100), z.string().min(1).max(100))
      .describe("Speaker prefixes → roles: `{\"Human\": \"user\", \"Assistant\": \"assistant\"}` splits on `Human:` / `Assistant:` at the start of a line"),
  })
  .strict()
  .describe("A plain-text transcript (`\\n\\nHuman: … \\n\\nAssistant: …`) split into messages on speaker prefixes");

const extract = z
  .object({
    from: path("Record field holding the text"),
    between: z
      .array(z.tuple([z.string().min(1).max(300), z.string().min(1).max(300)]))
      .min(1)
      .max(5)
      .describe("Literal start and end markers; the first pair found gives the text between them (an end marker missing: to the end of the text)"),
  })
  .strict()
  .describe("Text found between literal markers inside another text (an answer embedded in a judge's prompt)");

const side = z
  .object({
    transcript: path("Record field holding this side as a plain-text transcript (split with `speakers`)").optional(),
    messages: path("Record field holding this side as a list of chat messages").optional(),
    reply: z.union([z.string().max(300), extract]).optional().describe("This side's reply: a record field, or text extracted from another field"),
    label: path("Record field naming this side (a model's name)").optional(),
  })
  .strict();

const pair = z
  .object({
    from: z.literal("pair"),
    a: side.describe("The first conversation or reply"),
    b: side.describe("The second conversation or reply"),
    prompt: z.union([z.string().max(300), extract]).optional().describe("The question both replies answer, when the sides are replies: a record field, or text extracted from another"),
    speakers: z.record(z.string().min(1).max(100), z.string().min(1).max(100)).optional().describe("Speaker prefixes for sides given as transcripts (default `{\"Human\": \"user\", \"Assistant\": \"assistant\"}`)"),
    choice: z
      .array(
        z
          .object({
            path: path("Record field holding the human's or judge's choice"),
            a: z.array(scalar).min(1).max(10).describe("Values that choose a"),
            b: z.array(scalar).min(1).max(10).describe("Values that choose b"),
          })
          .strict(),
      )
      .max(5)
      .optional()
      .describe("Where the choice is; several (two games with the positions swapped) must agree, else it is a tie"),
    chosen: z.enum(["a", "b"]).optional().describe("The side chosen when the file says it by its field names (HH-RLHF's `chosen` / `rejected`: `a`)"),
  })
  .strict()
  .describe(
    "Preference or pairwise records: each record gives two conversations (a, b) that share the prompt, and the choice. Each becomes a conversation; the last replies carry `meta.parent_id` (the pair), `meta.message_id` and `meta.rank` (0 chosen, 1 not; both 0 for a tie), so a siblings comparison and the ranking agreement read them; the conversation meta holds `pair` (id, side, label, chosen, the choice fields)",
  );

const perRecord = z
  .object({
    from: z.literal("records"),
    messages: path("Record field holding its message list (`.` when each record is one message and the file is one conversation)"),
  })
  .strict()
  .describe("Each record is a conversation holding its messages");

const grouped = z
  .object({
    from: z.literal("group"),
    by: z.string().max(300).describe("Record field shared by the messages of one conversation (`session_id`); `\"\"`: every record in one conversation"),
    message_id: path("Record field grouping several records into one message (parts of a message carrying `messageID`); the message's role is the first `role` any of them has").optional(),
  })
  .strict()
  .describe("Each record is a message (or a part of one); records are grouped into conversations");

const toolCallsSchema = z.union([
  z.string().max(300),
  z
    .object({
      path: path("Message field holding a call or a list of calls"),
      name: path("Call field holding the tool's name (default `name`, `function.name`, `function_name`, `tool_name` or `toolName`)").optional(),
      arguments: path("Call field holding its arguments (default `arguments`, `args` or `input`; JSON text decoded)").optional(),
      id: path("Call field holding its id").optional(),
      result: path("Call field holding its result, when the call carries it (results in the same message)").optional(),
    })
    .strict(),
]);

const toolResultSchema = z.union([
  path("Message field holding a tool's output: the message is that tool's reply, or — when the message also holds calls — the reply to its first call"),
  z
    .object({
      path: path("Message field holding a result or a list of results (`observation.results`)"),
      id: path("Result field naming the call it answers (`source_call_id`); absent, results answer the message's calls in order").optional(),
      content: path("Result field holding its output (default `content`, `output`, `result` or `text`, else the whole result)").optional(),
    })
    .strict(),
]);

const kindRule = z
  .object({
    as: z
      .enum(["message", "thinking", "tool_call", "tool_result", "results_in_text", "skip"])
      .describe(
        "What a record of this kind is: `message` (text of `role`), `thinking`, `tool_call` (its content is the call, JSON text decoded), `tool_result`, `results_in_text` (a later record whose text holds the results of the calls before it), `skip`",
      ),
    role: z.string().max(100).optional().describe("The role of a `message` of this kind (`user`, `assistant`, `system`, `tool`)"),
    first_role: z.string().max(100).optional().describe("The role of the first record of this kind (the user's task written as the first `text` record)"),
    content: path("Field holding this kind's text or call, when not the message's `content`").optional(),
    after: z.string().max(200).optional().describe("`results_in_text`: each result starts after this literal marker (`] Result:`); absent, the whole text is one result"),
    when: conditions
      .optional()
      .describe(
        "Records told apart by the fields they carry, with no field naming their kind: a record is of this kind when all these conditions hold (`[{\"path\": \"task\", \"exists\": true}]`); the first kind listed whose conditions hold is the record's",
      ),
    thinking: path("`message`: field of this kind holding reasoning").optional(),
    tool_calls: toolCallsSchema.optional().describe("`message`: where this kind's tool calls are (as `message.tool_calls`)"),
    tool_result: toolResultSchema.optional().describe("`message`: where this kind's tool results are (as `message.tool_result`)"),
  })
  .strict();

export const mappingMessageSchema = z
  .object({
    role: path("Message field holding its speaker (any values: map them with `roles`)").optional(),
    roles: z
      .record(z.string(), z.string())
      .optional()
      .describe("Speaker values → Turnscope roles (`user`, `assistant`, `system`, `tool`): `{\"gemini\": \"assistant\", \"HumanMessage\": \"user\"}`"),
    role_value: z.string().max(100).optional().describe("Every message has this role (bare strings of one speaker)"),
    content: z
      .union([z.string().max(300), z.array(z.string().max(300)).min(1).max(10)])
      .optional()
      .describe("Message field(s) holding its text: a string, a list of strings or parts (joined); several fields joined. `.` when the message is the text itself"),
    format: z
      .enum(["fields", "chat"])
      .optional()
      .describe("`chat`: read each message as a chat message of a known dialect (OpenAI, Anthropic, ShareGPT, LangChain's serialised `{lc, type: \"constructor\", id, kwargs}`); `fields` (default): read the fields named here"),
    kind: path("Field telling kinds of records apart (`say`, `type`); with `kinds`").optional(),
    kinds: z
      .record(z.string(), kindRule)
      .optional()
      .describe("What each kind is (`{\"text\": {\"as\": \"message\", \"role\": \"assistant\", \"first_role\": \"user\"}, \"tool\": {\"as\": \"tool_call\"}}`); kinds not listed are skipped and counted"),
    thinking: path("Message field holding reasoning: text, or a list of text or objects (each object's text fields joined)").optional(),
    tool_calls: toolCallsSchema.optional().describe("Where a message's tool calls are"),
    tool_result: toolResultSchema.optional().describe("Where a message's tool results are: a field (the message is a tool's reply), or results inside the message linked to its calls by id"),
    tool_call_id: path("Message field naming the call a result answers (results paired by id)").optional(),
    clean: z
      .array(z.enum(["private_use"]))
      .max(5)
      .optional()
      .describe("`private_use`: markers wrapped in Unicode private-use characters (ChatGPT's citation markers `\\ue200cite\\ue202turn0search0\\ue201`) are taken out of the text, kept in the message's meta as `markers`"),
    skip: conditions.optional().describe("Messages that are not turns when any one condition holds (hidden nodes, empty placeholders)"),
    meta: z.array(z.string().max(300)).max(200).optional().describe("Message fields copied into the message's meta; default every field the mapping does not read (`[]`: none)"),
  })
  .strict();

export const mappingResultsSchema = z
  .object({
    by: z
      .enum(["id", "order", "text"])
      .describe("How results find their calls: `id` (`tool_call_id`, or a result carried by its call), `order` (each result answers the oldest call not yet answered), `text` (found in a later record's text: `kinds` with `results_in_text`)"),
  })
  .strict();

export const importMappingV2Object = z
  .object({
    version: z.literal(2).describe("Always 2 for this language (a mapping without `version` is read as version 1)"),
    records: mappingRecordsSchema.optional().describe("Where the records are and which are read; default: the top-level list or the JSON Lines"),
    conversations: z
      .discriminatedUnion("from", [perRecord, grouped, tree, spans, transcript, pair])
      .describe("How records form conversations, by `from`: `records`, `group`, `tree`, `spans`, `transcript`, `pair`"),
    message: mappingMessageSchema.optional().describe("How a message's fields are read; default `{\"format\": \"chat\"}` for spans, transcripts and pairs"),
    results: mappingResultsSchema.optional().describe("How tool results are linked to their calls; default `id` when `tool_call_id` is named, else `order`"),
    name: path("Record field used as the conversation's name").optional(),
    meta: z.array(z.string().max(300)).max(200).optional().describe("Record fields copied into the conversation's meta; default every field except the messages"),
  })
  .strict();

export const importMappingV2Schema = importMappingV2Object.meta({
  id: "ImportMappingV2",
  examples: [
    {
      version: 2,
      conversations: { from: "tree", nodes: "mapping", parent: "parent", message: "message", leaf: "current_node" },
      message: {
        role: "author.role",
        content: "content.parts",
        skip: [{ path: "metadata.is_visually_hidden_from_conversation", equals: true }, { path: "content.parts", empty: true }],
        clean: ["private_use"],
      },
      name: "title",
    },
    {
      version: 2,
      records: { container: "gzip" },
      conversations: { from: "pair", a: { transcript: "chosen" }, b: { transcript: "rejected" }, chosen: "a" },
    },
  ],
});

export type MappingCondition = z.infer<typeof mappingConditionSchema>;
export type ImportMappingV2 = z.infer<typeof importMappingV2Object>;
export type MappingMessage = z.infer<typeof mappingMessageSchema>;
export type MappingKindRule = z.infer<typeof kindRule>;
export type MappingExtract = z.infer<typeof extract>;
export type MappingSide = z.infer<typeof side>;
