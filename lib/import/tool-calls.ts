/**
 * The soft rules on tool calls: a call should name a tool one of the conversation's agents declares,
 * with arguments of the declared types. Both are warnings, so an imperfect trace still imports.
 */
import type { ImportIssue } from "@/lib/schemas/imports";
import { clip, isRecord, joinPath, jsonTypeOf } from "./issues";

/** Tool name → declared parameter types (absent when the tool declares none we can read). */
export type DeclaredTools = Map<string, Map<string, string[]> | undefined>;

const typeAliases: Record<string, string> = {
  str: "string",
  text: "string",
  int: "integer",
  float: "number",
  double: "number",
  bool: "boolean",
  dict: "object",
  map: "object",
  list: "array",
};
const knownTypes = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/** `"string"`, `"string | null"`, `{type: "number"}`, `{type: ["string", "null"]}` → known type names. */
function declaredTypes(spec: unknown): string[] {
  const raw = isRecord(spec) ? spec.type : spec;
  const names = typeof raw === "string" ? raw.split(/[|,]/) : Array.isArray(raw) ? raw.filter((t) => typeof t === "string") : [];
  return names.map((t) => t.trim().toLowerCase()).map((t) => typeAliases[t] ?? t).filter((t) => knownTypes.has(t));
}

/** Parameters as a flat map (`{city: "string"}`) or a JSON Schema object (`{type: "object", properties}`). */
function parameterTypes(parameters: unknown): Map<string, string[]> | undefined {
  if (!isRecord(parameters)) return undefined;
  const props = parameters.type === "object" && isRecord(parameters.properties) ? parameters.properties : parameters;
  const out = new Map<string, string[]>();
  for (const [name, spec] of Object.entries(props)) {
    const types = declaredTypes(spec);
    if (types.length) out.set(name, types);
  }
  return out.size ? out : undefined;
}

/** Every tool the conversation's agents declare; empty when it declares none (then nothing is checked). */
export function collectDeclaredTools(agents: unknown): DeclaredTools {
  const tools: DeclaredTools = new Map();
  if (!Array.isArray(agents)) return tools;
  for (const agent of agents) {
    if (!isRecord(agent)) continue;
    const list = isRecord(agent.tools) ? Object.entries(agent.tools) : Array.isArray(agent.tools) ? agent.tools.map((t) => ["", t] as const) : [];
    for (const [key, def] of list) {
      const fn = isRecord(def) && isRecord(def.function) ? def.function : def;
      const name = isRecord(fn) && typeof fn.name === "string" ? fn.name : key;
      if (name) tools.set(name, isRecord(fn) ? parameterTypes(fn.parameters) : undefined);
    }
  }
  return tools;
}

function matches(value: unknown, type: string): boolean {
  const actual = jsonTypeOf(value);
  if (type === "number") return actual === "number" || actual === "integer";
  return actual === type;
}

/** Warnings for one well-formed tool call (`{name, arguments?}`) against the declared tools. */
export function checkToolCall(
  call: { name: string; arguments: unknown },
  declared: DeclaredTools,
  path: string,
  warn: (issue: ImportIssue) => void,
): void {
  if (declared.size === 0) return;
  const name = clip(call.name);
  if (!declared.has(call.name)) {
    const names = [...declared.keys()].slice(0, 20).map((n) => clip(n)).join(", ");
    warn({
      path: joinPath(path, "name"),
      message: `Tool '${name}' is not declared by the conversation's agents`,
      suggestion: `Declared tools: ${names}. Fix the name, or add '${name}' to an agent's tools`,
    });
    return;
  }
  const params = declared.get(call.name);
  if (!params || !isRecord(call.arguments)) return;
  for (const [arg, value] of Object.entries(call.arguments)) {
    const types = params.get(arg);
    if (!types || types.some((t) => matches(value, t))) continue;
    const expected = types.join(" or ");
    warn({
      path: joinPath(joinPath(path, "arguments"), arg),
      message: `Argument '${clip(arg)}' of '${name}' is ${jsonTypeOf(value)}, declared ${expected}`,
      suggestion: `Pass '${clip(arg)}' as ${/^[aeiou]/.test(expected) ? "an" : "a"} ${expected}, or correct the declared parameter type`,
    });
  }
}
