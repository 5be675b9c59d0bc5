/**
 * What every check works with: a loaded conversation (the runner's ConversationTree, with the meta the
 * repository loads along), the entity the cell evaluates, and the verdict a check returns.
 */
import type { z } from "zod";
import type { EvaluationLevel, StepKind } from "@/lib/vocabulary";
import type { ConversationTree, JudgeMessage, JudgeStep } from "@/lib/conversation-tree";

/** The tree as the repository loads it: conversation and message `meta` come along (unused by prompts). */
export type CheckTree = {
  conversation: ConversationTree["conversation"] & { meta?: unknown };
  messages: Array<JudgeMessage & { meta?: unknown }>;
};

export type CheckEntity = { type: EvaluationLevel; id: number };

/** Where the entity sits: its message and step when it has them, and every step in its scope. */
export type CheckContext = {
  tree: CheckTree;
  level: EvaluationLevel;
  message?: CheckTree["messages"][number];
  messageIndex: number;
  step?: JudgeStep;
  stepIndex: number;
};

/** A check's answer: passed or not, and a reasoning that says exactly what failed (or what was checked). */
export type CheckVerdict = { pass: boolean; reasoning: string };

export type CheckDefinition<P = unknown> = {
  type: string;
  label: string;
  description: string;
  /** Levels at which the check means something. */
  levels: readonly EvaluationLevel[];
  /** Step kinds it judges by default at step level (a metric may narrow or widen them). */
  appliesTo?: readonly StepKind[];
  params: z.ZodType<P>;
  /** Work that can grow faster than the text or with the user's pattern or schema: run off the event loop, with a time budget. */
  offLoop?: boolean;
  run(params: P, ctx: CheckContext): CheckVerdict;
};

/** Type-erased for the registry: params were parsed with the check's own schema first. */
export type AnyCheck = CheckDefinition<never> & { run(params: never, ctx: CheckContext): CheckVerdict };
