/**
 * The conversations a run's cells read (lib/runner): each conversation's tree loaded once, loaded ahead
 * for the cells to come, and its @GOAL extracted once by the first cell of a metric that needs it.
 */
import "server-only";
import type { CallGate, GoalUsage, JudgeDeps } from "@/lib/judge";
import { resolveModelName } from "@/lib/judge";
import { loadConversationTree, loadConversationTrees, type ConversationTree } from "@/lib/metrics";
import { withGoal } from "@/lib/metrics/conversation-goal";
import type { RunRequest } from "@/lib/schemas/executions";
import type { Cell } from "./plan";

const TREE_CACHE = 64;

export type TreeOptions = {
  req: RunRequest;
  signal: AbortSignal;
  judge?: JudgeDeps;
  /** Whether a judge is there to extract a goal with. */
  judgeConfigured: boolean;
  /** The gate of the run's calls for a model (a goal extraction is one of the run's calls). */
  gate: (model: string) => CallGate;
  /** A goal extraction's usage landed, for the conversation. */
  goalLanded: (conversationId: number, usage: GoalUsage) => void;
};

export function conversationTrees({ req, signal, judge, judgeConfigured, gate, goalLanded }: TreeOptions) {
  const trees = new Map<number, Promise<ConversationTree>>();
  /**
   * Trees loaded ahead, taken by the first cell of their conversation: a cell whose conversation is not
   * loaded yet loads it together with those of the cells after it, up to TREE_CACHE conversations in three
   * queries (one conversation per cell cost three queries a cell, ~15% of a served run's CPU on one-message
   * conversations). A failed load ahead is no failure: the cell then loads its own tree, whose error it reports.
   */
  const ahead = new Map<number, Promise<ConversationTree | undefined>>();
  /** The cells being evaluated, and each one's place, to look ahead from. */
  let upcoming: { cells: Cell[]; at: Map<Cell, number> } | undefined;
  const loadAhead = (cell: Cell) => {
    const from = upcoming?.at.get(cell);
    if (!upcoming || from === undefined) return;
    const ids = new Set<number>();
    // Bounded, so a run over few long conversations (thousands of cells each) does not scan the whole run per conversation.
    const until = Math.min(upcoming.cells.length, from + 4 * TREE_CACHE);
    for (let i = from; i < until && ids.size < TREE_CACHE; i++) {
      const id = upcoming.cells[i].conversationId;
      if (!trees.has(id) && !ahead.has(id)) ids.add(id);
    }
    if (ids.size < 2) return; // one conversation: the cell loads it itself, as cheaply
    const loading = loadConversationTrees([...ids]).catch(() => new Map<number, ConversationTree>());
    for (const id of ids) ahead.set(id, loading.then((found) => found.get(id)));
  };
  /** The conversation's tree once its @GOAL is ensured (by the first cell of a metric that uses it). */
  const goalTrees = new Map<number, Promise<ConversationTree>>();

  return {
    /** Look ahead from these cells until {@link done}. */
    upcoming(cells: Cell[]): void {
      upcoming = { cells, at: new Map(cells.map((cell, i) => [cell, i])) };
    },
    done(): void {
      upcoming = undefined;
      ahead.clear();
    },

    /** The tree a cell reads: its conversation's, with the @GOAL its metric needs. */
    treeFor(cell: Cell): Promise<ConversationTree> {
      const conversationId = cell.conversationId;
      let tree = trees.get(conversationId);
      if (!tree) {
        if (!ahead.has(conversationId)) loadAhead(cell);
        const early = ahead.get(conversationId);
        ahead.delete(conversationId);
        tree = early ? early.then((t) => t ?? loadConversationTree(conversationId)) : loadConversationTree(conversationId);
        trees.set(conversationId, tree);
        if (trees.size > TREE_CACHE) trees.delete(trees.keys().next().value as number);
      }
      // Per cell, not per tree: the conversation's first cell may be of a metric without @GOAL (another
      // column first, or a queued batch that starts mid-conversation), and a later cell's metric needs it.
      if (!judgeConfigured || !cell.node.templateVariables?.includes("@GOAL")) return tree;
      let withIt = goalTrees.get(conversationId);
      if (!withIt) {
        // @GOAL is extracted once per conversation by the judge model and stored; later runs reuse it. With
        // the model of the first metric that needs it, so its tokens are priced as the cell that carries them.
        const model = resolveModelName(req.model_name, cell.node.modelName);
        const onUsage = (u: GoalUsage) => goalLanded(conversationId, u);
        withIt = tree.then((t) => (t.conversation.goal ? t : withGoal(t, { model, signal, gate: gate(model), onUsage }, judge)));
        goalTrees.set(conversationId, withIt);
        if (goalTrees.size > TREE_CACHE) goalTrees.delete(goalTrees.keys().next().value as number);
      }
      return withIt;
    },
  };
}

export type ConversationTrees = ReturnType<typeof conversationTrees>;
