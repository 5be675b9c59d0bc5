/**
 * The template-variable catalogue of shared/API.md ("Template variables"): which `@VARIABLES` exist at
 * each evaluation level, how they are found in a prompt, and how a prompt is checked against its level.
 * Pure and free of server imports, so the metric editor validates live with the very same rules.
 */
import type { EvaluationLevel, OutputType } from "@/lib/vocabulary";

export type VariableInfo = {
  /** As written in a prompt, e.g. `@CURRENT_STEP.tool_call`. */
  name: string;
  description: string;
  /** Levels at which the variable has a value. */
  levels: readonly EvaluationLevel[];
};

const all: readonly EvaluationLevel[] = ["conversation", "message", "step"];
const messageAndStep: readonly EvaluationLevel[] = ["message", "step"];
const stepOnly: readonly EvaluationLevel[] = ["step"];

export const stepFields = ["thinking", "tool_call", "tool_result", "output_content", "output_structured"] as const;
export type StepField = (typeof stepFields)[number];

const stepFieldLabels: Record<StepField, string> = {
  thinking: "reasoning text",
  tool_call: "tool call (name and arguments)",
  tool_result: "tool result",
  output_content: "text output",
  output_structured: "structured output",
};

/** Every variable, in the order the editor offers them. */
export const variableCatalogue: readonly VariableInfo[] = [
  { name: "@HISTORY", levels: all, description: "Transcript up to and including the evaluated entity: `[role]: content` lines, steps summarised" },
  { name: "@GOAL", levels: all, description: "The user's goal (extracted once per conversation; the first user message until then)" },
  { name: "@LIST_AGENT", levels: all, description: "The conversation's agents and their tools" },
  { name: "@MESSAGES", levels: all, description: "Every message of the conversation as `[role]: content` lines, without steps" },
  { name: "@USER_MESSAGES", levels: all, description: "Every user message of the conversation" },
  { name: "@ASSISTANT_MESSAGES", levels: all, description: "Every assistant message of the conversation" },
  { name: "@FIRST_USER_MSG", levels: all, description: "The first user message of the conversation" },
  { name: "@LAST_USER_MSG", levels: all, description: "The last user message of the conversation" },
  { name: "@LAST_ASSISTANT_MSG", levels: all, description: "The last assistant message of the conversation" },
  { name: "@PREVIOUS_USER_MSG", levels: messageAndStep, description: "The last user message before the current message" },
  { name: "@PREVIOUS_ASSISTANT_MSG", levels: messageAndStep, description: "The last assistant message before the current message" },
  { name: "@CURRENT_MESSAGE.output", levels: messageAndStep, description: "The content of the current message" },
  { name: "@CURRENT_MESSAGE.input", levels: messageAndStep, description: "The user message the current message answers" },
  { name: "@CURRENT_MESSAGE.role", levels: messageAndStep, description: "The role of the current message" },
  { name: "@CURRENT_STEPS", levels: messageAndStep, description: "Every step of the current message, in order" },
  { name: "@CURRENT_STEPS_COUNT", levels: messageAndStep, description: "How many steps the current message has" },
  { name: "@CONTENT", levels: messageAndStep, description: "Alias of @CURRENT_MESSAGE.output (older prompts use it)" },
  ...stepFields.map((f) => ({ name: `@CURRENT_STEP.${f}`, levels: stepOnly, description: `The current step's ${stepFieldLabels[f]}` })),
  ...stepFields.map((f) => ({
    name: `@PREVIOUS_STEP.${f}`,
    levels: stepOnly,
    description: `The previous step's ${stepFieldLabels[f]} (same message; (none) for the first step)`,
  })),
  { name: "@STEP_NUMBER", levels: stepOnly, description: "The current step's number within its message (1-based)" },
];

/**
 * A pairwise metric's two replies to one input (issue 38.5). The usual variables beside them describe
 * the input both answer — the conversation before the replies — so only conversation-level ones exist there.
 */
export const pairwiseVariableCatalogue: readonly VariableInfo[] = [
  { name: "@CANDIDATE_A", levels: ["conversation", "message"], description: "Pairwise metrics: the reply shown first (each pair is judged twice, each reply once in this place)" },
  { name: "@CANDIDATE_B", levels: ["conversation", "message"], description: "Pairwise metrics: the reply shown second" },
];
export const pairwiseVariables = pairwiseVariableCatalogue.map((v) => v.name);

const byName = new Map([...variableCatalogue, ...pairwiseVariableCatalogue].map((v) => [v.name, v]));

/** Variables whose name takes a `.field`; only these swallow a dot, so `@GOAL.` ends a sentence. */
const objectVariables = new Set(["@CURRENT_MESSAGE", "@CURRENT_STEP", "@PREVIOUS_STEP", "@METRIC"]);

/**
 * `@METRIC.<name>`: another metric's latest verdict for the same entity (or its conversation). Valid
 * at every level here; that the name is a dependency of the metric is checked on save.
 */
export function isMetricVariable(name: string): boolean {
  return name.startsWith("@METRIC.");
}

/** How a metric's name is written after `@METRIC.`: spaces and punctuation as underscores, any case. */
export function metricVariableName(metricName: string): string {
  return `@METRIC.${metricName.trim().replace(/[^A-Za-z0-9_]+/g, "_")}`;
}

/**
 * `@` + an upper-case name. The look-behind keeps e-mail addresses (`ana@EXAMPLE.com`) and `@@` out;
 * the look-ahead rejects mixed-case words (`@Goal`, `@mention`) instead of backtracking to a prefix.
 */
const variablePattern = /(?<![\p{L}\p{N}_.+\-@])@([A-Z][A-Z0-9_]*)(?![\p{L}\p{N}_])(?:\.([A-Za-z_][A-Za-z0-9_]*))?/gu;

export type VariableOccurrence = { name: string; index: number; length: number };

/**
 * The occurrences of the prompts seen last: a run builds one metric's prompt for every cell, and the
 * pattern's Unicode look-arounds cost ~3% of a served run's CPU when matched anew each time.
 */
const seen = new Map<string, readonly VariableOccurrence[]>();
/** A run uses a few metrics' prompts; each is at most 50,000 characters, so this holds a few MB at most. */
const SEEN_MAX = 64;

/** Every variable occurrence in a prompt, in order (duplicates included), with its offset. */
export function findVariables(prompt: string): readonly VariableOccurrence[] {
  let found = seen.get(prompt);
  if (!found) {
    if (seen.size >= SEEN_MAX) seen.clear();
    seen.set(prompt, (found = Object.freeze(matchVariables(prompt))));
  }
  return found;
}

function matchVariables(prompt: string): VariableOccurrence[] {
  const out: VariableOccurrence[] = [];
  for (const match of prompt.matchAll(variablePattern)) {
    const base = `@${match[1]}`;
    const field = match[2];
    if (field !== undefined && objectVariables.has(base)) {
      out.push({ name: `${base}.${field}`, index: match.index, length: match[0].length });
    } else {
      out.push({ name: base, index: match.index, length: base.length });
    }
  }
  return out;
}

/** The distinct variables a prompt uses, in first-seen order. */
export function extractVariables(prompt: string): string[] {
  return [...new Set(findVariables(prompt).map((v) => v.name))];
}

/** The variables valid at a level, in catalogue order. */
export function variablesForLevel(level: EvaluationLevel): string[] {
  return variableCatalogue.filter((v) => v.levels.includes(level)).map((v) => v.name);
}

export function describeVariable(name: string): VariableInfo | undefined {
  return byName.get(name);
}

export type VariableCheck = {
  /** Distinct variables in first-seen order. */
  variables: string[];
  /** Those not valid at the level (unknown names, or known at another level only). */
  invalid: string[];
  /** A prompt with no variable is basic mode: the level's default context is appended. */
  isAdvanced: boolean;
};

/** Extract a prompt's variables and check them against a level (a pairwise metric's: see pairwiseVariableCatalogue). */
export function checkPromptVariables(prompt: string, level: EvaluationLevel, outputType?: OutputType): VariableCheck {
  const variables = extractVariables(prompt);
  const valid = new Set(outputType === "pairwise" ? [...variablesForLevel("conversation"), ...pairwiseVariables] : variablesForLevel(level));
  return { variables, invalid: variables.filter((v) => !valid.has(v) && !isMetricVariable(v)), isAdvanced: variables.length > 0 };
}

/** A readable reason for one invalid variable: unknown, or at which levels it does exist. */
export function explainInvalidVariable(name: string, level: EvaluationLevel, outputType?: OutputType): string {
  if (pairwiseVariables.includes(name)) return `${name} exists only in pairwise metrics (output_type pairwise)`;
  const known = byName.get(name);
  if (known && outputType === "pairwise") return `${name} is not available in a pairwise metric: its variables describe the input both replies answer (conversation-level variables), beside @CANDIDATE_A and @CANDIDATE_B`;
  if (known) return `${name} is not available at the ${level} level (only at: ${known.levels.join(", ")})`;
  const base = name.split(".")[0];
  if (objectVariables.has(base)) {
    const fields = variableCatalogue.filter((v) => v.name.startsWith(`${base}.`)).map((v) => v.name.slice(base.length));
    return `${name} is not a known variable; ${base} takes one of ${fields.join(", ")}`;
  }
  return `${name} is not a known variable`;
}
